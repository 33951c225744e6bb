package bench_test

import (
	"net/http"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/resilience-go/pipeline/otel"
	"github.com/resilience-go/pipeline/pipelinehttp"
)

// oursHTTPObserved is our transport with every default, observed by the
// OpenTelemetry module through its one field (Config.Observer) on an SDK
// meter provider that is never collected: what the observation adds to a
// call, the SDK's own recording included.
func oursHTTPObserved(base http.RoundTripper) *http.Client {
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	tel, err := pipelineotel.New(pipelineotel.Config{MeterProvider: mp})
	if err != nil {
		panic(err)
	}
	tr, err := pipelinehttp.New(pipelinehttp.Config{Base: base, Observer: tel})
	if err != nil {
		panic(err)
	}
	return &http.Client{Transport: tr}
}

package pipelineotel_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/resilience-go/pipeline/otel"
	"github.com/resilience-go/pipeline/pipelinehttp"
)

// answering is a base transport that answers every request at once with a
// small 200, without a network: what the pipeline and the telemetry cost
// is then most of what a call costs.
type answering struct{}

func (answering) RoundTrip(*http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("ok"))}, nil
}

// BenchmarkTransport runs GETs through the HTTP transport with every
// default, interleaved as Standard/interleaved does: bare, bare followed by
// the SDK's floor (the two Records of a call's measurements, see
// recordsFloor), and observed by a Telemetry through Config.Observer, the
// one field:
//
//	cd otel && go test -run '^$' -bench Transport -count 8
func BenchmarkTransport(b *testing.B) {
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	tel, err := pipelineotel.New(pipelineotel.Config{MeterProvider: mp})
	if err != nil {
		b.Fatal(err)
	}
	bare, err := pipelinehttp.New(pipelinehttp.Config{Base: answering{}})
	if err != nil {
		b.Fatal(err)
	}
	observed, err := pipelinehttp.New(pipelinehttp.Config{Base: answering{}, Observer: tel})
	if err != nil {
		b.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodGet, "http://api.test/", nil)
	if err != nil {
		b.Fatal(err)
	}
	get := func(rt http.RoundTripper) func() {
		return func() {
			resp, err := rt.RoundTrip(req)
			if err != nil {
				b.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
		}
	}
	floor := recordsFloor(b, nil).(floorExecutor)
	ctx := context.Background()
	floored := func() {
		get(bare)()
		floor.record(ctx)
	}
	for _, f := range []func(){get(bare), get(observed)} { // warm the hosts' state
		for range 100 {
			f()
		}
	}
	interleave(b, []string{"bare", "floor", "otel"}, []func(){get(bare), floored, get(observed)})
}

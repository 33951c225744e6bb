package main

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel/attribute"
	otelprometheus "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"

	pipelineotel "github.com/resilience-go/pipeline/otel"
)

// serviceName is the service's name in its OpenTelemetry resource, the
// service_name label of the exporter's target_info.
const serviceName = "resilience-example"

// metrics are the service's OpenTelemetry metrics: a meter provider whose
// reader is OpenTelemetry's Prometheus exporter, which registers with a
// Prometheus registry of the service's own (not the global one, so that
// two runs in one process do not collide), served by handler in the text
// format; and the library's Telemetry on that provider.
type metrics struct {
	provider  *sdkmetric.MeterProvider
	telemetry *pipelineotel.Telemetry
	handler   http.Handler // the scrape endpoint, /metrics
}

// newMetrics builds the metrics; errors from the scrape handler go to
// logger.
func newMetrics(logger *slog.Logger) (*metrics, error) {
	registry := prometheus.NewRegistry()
	exporter, err := otelprometheus.New(otelprometheus.WithRegisterer(registry))
	if err != nil {
		return nil, err
	}
	provider := sdkmetric.NewMeterProvider(
		sdkmetric.WithReader(exporter),
		sdkmetric.WithResource(resource.NewSchemaless(attribute.String("service.name", serviceName))),
	)
	tel, err := pipelineotel.New(pipelineotel.Config{MeterProvider: provider})
	if err != nil {
		_ = provider.Shutdown(context.Background())
		return nil, err
	}
	handler := promhttp.HandlerFor(registry, promhttp.HandlerOpts{
		ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelError),
	})
	return &metrics{provider: provider, telemetry: tel, handler: handler}, nil
}

// shutdown shuts the meter provider down: a scrape after it reports
// nothing.
func (m *metrics) shutdown(ctx context.Context) error {
	return m.provider.Shutdown(ctx)
}

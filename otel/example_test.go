package pipelineotel_test

import (
	"context"
	"errors"
	"fmt"
	"slices"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/resilience-go/pipeline/otel"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/standard"
)

// NewStandard builds the standard preset with its telemetry in one call.
// Here the meter provider's reader is read by hand; in a service it would be
// an exporter's (OTLP, Prometheus).
func ExampleNewStandard() {
	reader := sdkmetric.NewManualReader()
	tel, err := pipelineotel.New(pipelineotel.Config{
		MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)),
	})
	if err != nil {
		panic(err)
	}
	p, err := pipelineotel.NewStandard[string](tel, standard.Config{Name: "payments"})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	for _, fail := range []bool{false, false, true} {
		_, _ = p.Execute(ctx, func(context.Context) (string, error) {
			if fail {
				return "", outcome.MarkPermanent(errors.New("card declined"))
			}
			return "paid", nil
		})
	}

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		panic(err)
	}
	var lines []string
	for _, m := range rm.ScopeMetrics[0].Metrics {
		if m.Name != pipelineotel.MetricCallDuration {
			continue
		}
		for _, dp := range m.Data.(metricdata.Histogram[float64]).DataPoints {
			name, _ := dp.Attributes.Value(pipelineotel.AttrPipeline)
			result, _ := dp.Attributes.Value(pipelineotel.AttrOutcome)
			lines = append(lines, fmt.Sprintf("%s %s{pipeline=%s, outcome=%s}: %d", m.Name, m.Unit, name.AsString(), result.AsString(), dp.Count))
		}
	}
	slices.Sort(lines)
	for _, l := range lines {
		fmt.Println(l)
	}
	// Output:
	// resilience.call.duration s{pipeline=payments, outcome=ok}: 2
	// resilience.call.duration s{pipeline=payments, outcome=permanent}: 1
}

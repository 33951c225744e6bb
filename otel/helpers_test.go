package pipelineotel_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/resilience-go/pipeline/otel"
)

// rig is a Telemetry on an SDK meter provider read by hand and a tracer
// provider whose ended spans are recorded.
type rig struct {
	tel    *pipelineotel.Telemetry
	reader *sdkmetric.ManualReader
	spans  *tracetest.SpanRecorder
	tracer trace.Tracer
}

func newRig(t *testing.T) rig {
	t.Helper()
	reader := sdkmetric.NewManualReader()
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	tel, err := pipelineotel.New(pipelineotel.Config{
		MeterProvider:  sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)),
		TracerProvider: tp,
	})
	require.NoError(t, err)
	return rig{tel: tel, reader: reader, spans: spans, tracer: tp.Tracer("test")}
}

// metrics collects every data point and writes each as one line,
//
//	name{key=value,...} value
//
// with the attribute keys' "resilience." prefix dropped, a histogram's value
// as its count and sum, and the lines sorted.
func (r rig) metrics(t *testing.T) []string {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, r.reader.Collect(context.Background(), &rm))
	var lines []string
	for _, sm := range rm.ScopeMetrics {
		require.Equal(t, pipelineotel.ScopeName, sm.Scope.Name)
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					lines = append(lines, fmt.Sprintf("%s%s count=%d sum=%.6g", m.Name, attrs(p.Attributes), p.Count, p.Sum))
				}
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					lines = append(lines, fmt.Sprintf("%s%s %d", m.Name, attrs(p.Attributes), p.Value))
				}
			case metricdata.Gauge[int64]:
				for _, p := range d.DataPoints {
					lines = append(lines, fmt.Sprintf("%s%s %d", m.Name, attrs(p.Attributes), p.Value))
				}
			case metricdata.Gauge[float64]:
				for _, p := range d.DataPoints {
					lines = append(lines, fmt.Sprintf("%s%s %.6g", m.Name, attrs(p.Attributes), p.Value))
				}
			default:
				t.Fatalf("%s: unexpected data %T", m.Name, m.Data)
			}
		}
	}
	slices.Sort(lines)
	return lines
}

// attrs writes a set as {key=value,...}, keys without "resilience.".
func attrs(s attribute.Set) string {
	var kv []string
	for _, a := range s.ToSlice() {
		kv = append(kv, strings.TrimPrefix(string(a.Key), "resilience.")+"="+a.Value.String())
	}
	return "{" + strings.Join(kv, ",") + "}"
}

// events writes the events of every ended span named name, in order, as
//
//	event key=value ...
//
// keys sorted and without "resilience.", floats to six digits.
func (r rig) events(name string) []string {
	var lines []string
	for _, s := range r.spans.Ended() {
		if s.Name() != name {
			continue
		}
		for _, e := range s.Events() {
			lines = append(lines, strings.TrimPrefix(e.Name, "resilience.")+" "+flat(e.Attributes))
		}
	}
	return lines
}

// flat writes attributes as key=value pairs, sorted, without "resilience.".
func flat(kvs []attribute.KeyValue) string {
	var out []string
	for _, a := range kvs {
		v := a.Value.String()
		if a.Value.Type() == attribute.FLOAT64 {
			v = fmt.Sprintf("%.6g", a.Value.AsFloat64())
		}
		out = append(out, strings.TrimPrefix(string(a.Key), "resilience.")+"="+v)
	}
	slices.Sort(out)
	return strings.Join(out, " ")
}

// wait is a dependency's latency: d on the bubble's clock, or until ctx is
// done, whose error it then returns.
func wait(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// hasKey reports whether kvs holds key.
func hasKey(kvs []attribute.KeyValue, key string) bool {
	for _, kv := range kvs {
		if string(kv.Key) == key {
			return true
		}
	}
	return false
}

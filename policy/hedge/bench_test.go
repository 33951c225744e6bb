package hedge_test

import (
	"context"
	"testing"
	"time"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/internal/hedgerule"
	"github.com/resilience-go/pipeline/latency"
	"github.com/resilience-go/pipeline/policy/hedge"
)

func benchStage(b *testing.B, repeatable bool) *pipeline.Pipeline[int] {
	est, err := latency.New(latency.Config{})
	if err != nil {
		b.Fatal(err)
	}
	for range hedgerule.DefaultMinSamples {
		est.Record(est.Now(), time.Microsecond)
	}
	h, err := hedge.New[int](hedge.Config{Estimator: est, Repeatable: repeatable})
	if err != nil {
		b.Fatal(err)
	}
	return pipeline.New[int](h)
}

func instant(context.Context) (int, error) { return 1, nil }

// BenchmarkArmed is a call that may be hedged and returns long before the
// delay: the cost of arming the hedge and disarming it.
func BenchmarkArmed(b *testing.B) {
	p := benchStage(b, true)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		_, _ = p.Execute(ctx, instant)
	}
}

// BenchmarkMeasured is a call that may not be hedged: the cost of measuring it.
func BenchmarkMeasured(b *testing.B) {
	p := benchStage(b, false)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		_, _ = p.Execute(ctx, instant)
	}
}

// BenchmarkArmedParallel is BenchmarkArmed from every core at once.
func BenchmarkArmedParallel(b *testing.B) {
	p := benchStage(b, true)
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			_, _ = p.Execute(ctx, instant)
		}
	})
}

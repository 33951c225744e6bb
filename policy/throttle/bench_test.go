package throttle_test

import (
	"context"
	"testing"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/throttle"
)

// failingThrottle returns a throttle whose window holds failures only, at
// its cap: a share of the attempts asks is refused.
func failingThrottle(b *testing.B) *throttle.Throttle {
	th := mustNew(b, throttle.Config{})
	for range 100 {
		if tk, err := th.Admit(); err == nil {
			th.Record(tk, outcome.Verdict{Kind: outcome.Transient})
		}
	}
	return th
}

// BenchmarkAdmit measures the two-step API: an admission and its record,
// on a healthy throttle (nothing to draw) and on a failing one (a draw, and
// mostly a refusal).
func BenchmarkAdmit(b *testing.B) {
	b.Run("healthy", func(b *testing.B) {
		th := mustNew(b, throttle.Config{})
		b.ReportAllocs()
		for b.Loop() {
			tk, _ := th.Admit()
			th.Record(tk, outcome.Verdict{})
		}
	})
	b.Run("failing", func(b *testing.B) {
		th := failingThrottle(b)
		b.ReportAllocs()
		for b.Loop() {
			if tk, err := th.Admit(); err == nil {
				th.Record(tk, outcome.Verdict{Kind: outcome.Transient})
			}
		}
	})
}

// BenchmarkAdmitParallel is BenchmarkAdmit from every P at once, on one
// throttle: the cost of its one lock under contention.
func BenchmarkAdmitParallel(b *testing.B) {
	b.Run("healthy", func(b *testing.B) {
		th := mustNew(b, throttle.Config{})
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				tk, _ := th.Admit()
				th.Record(tk, outcome.Verdict{})
			}
		})
	})
	b.Run("failing", func(b *testing.B) {
		th := failingThrottle(b)
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if tk, err := th.Admit(); err == nil {
					th.Record(tk, outcome.Verdict{Kind: outcome.Transient})
				}
			}
		})
	})
}

// BenchmarkGuard measures a call through a pipeline of the throttle stage
// alone, admitted and refused.
func BenchmarkGuard(b *testing.B) {
	ctx := context.Background()
	b.Run("ok", func(b *testing.B) {
		p := pipeline.New(throttle.Guard[int](mustNew(b, throttle.Config{})))
		b.ReportAllocs()
		for b.Loop() {
			_, _ = p.Execute(ctx, ok)
		}
	})
	b.Run("refused", func(b *testing.B) {
		th := mustNew(b, throttle.Config{MaxRejection: 1, Rand: alwaysRefuse})
		p := pipeline.New(throttle.Guard[int](th))
		_, _ = p.Execute(ctx, func(context.Context) (int, error) { return 0, errDown })
		b.ReportAllocs()
		for b.Loop() {
			_, _ = p.Execute(ctx, ok)
		}
	})
	b.Run("ok/parallel", func(b *testing.B) {
		p := pipeline.New(throttle.Guard[int](mustNew(b, throttle.Config{})))
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				_, _ = p.Execute(ctx, ok)
			}
		})
	})
}

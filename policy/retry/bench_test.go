package retry

import (
	"context"
	"testing"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/budget"
	"github.com/resilience-go/pipeline/policy/breaker"
)

func trivial(context.Context) (int, error) { return 1, nil }

// passThrough stands in for an inner stage such as a breaker: it only runs next.
var passThrough = pipeline.PolicyFunc[int](func(ctx context.Context, next pipeline.Next[int]) pipeline.Result[int] {
	return next.Run(ctx)
})

func benchSuccess(b *testing.B, p *pipeline.Pipeline[int]) {
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Execute(ctx, trivial); err != nil {
			b.Fatal(err)
		}
	}
}

func newBenchBudget(b *testing.B) *budget.Budget {
	bud, err := budget.New(budget.Config{})
	if err != nil {
		b.Fatal(err)
	}
	return bud
}

// BenchmarkSuccess measures the success path: one attempt, one budget deposit.
func BenchmarkSuccess(b *testing.B) {
	b.Run("bare pipeline", func(b *testing.B) {
		benchSuccess(b, pipeline.New[int]())
	})
	b.Run("retry", func(b *testing.B) {
		benchSuccess(b, pipeline.New[int](mustNew[int](b, Config{})))
	})
	b.Run("retry+budget", func(b *testing.B) {
		benchSuccess(b, pipeline.New[int](mustNew[int](b, Config{Budget: newBenchBudget(b)})))
	})
	b.Run("retry+budget+inner stage", func(b *testing.B) {
		benchSuccess(b, pipeline.New[int](mustNew[int](b, Config{Budget: newBenchBudget(b)}), passThrough))
	})
	b.Run("retry+budget+breaker", func(b *testing.B) {
		br, err := breaker.New(breaker.Config{})
		if err != nil {
			b.Fatal(err)
		}
		benchSuccess(b, pipeline.New[int](mustNew[int](b, Config{Budget: newBenchBudget(b)}), breaker.Guard[int](br)))
	})
}

// BenchmarkSuccessParallel is the success path with every goroutine sharing one
// pipeline and one budget.
func BenchmarkSuccessParallel(b *testing.B) {
	p := pipeline.New[int](mustNew[int](b, Config{Budget: newBenchBudget(b)}), passThrough)
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := p.Execute(ctx, trivial); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

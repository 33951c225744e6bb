package pipeline_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/resilience-go/pipeline"
)

//go:noinline
func work(context.Context) (int, error) { return 1, nil }

func passThrough(ctx context.Context, next pipeline.Next[int]) pipeline.Result[int] {
	return next.Run(ctx)
}

// BenchmarkDirect is the floor: calling the work without a pipeline.
func BenchmarkDirect(b *testing.B) {
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := work(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkExecute measures the pipeline's own cost with 0 to 8 trivial stages;
// the slope between sizes is the overhead of one stage.
func BenchmarkExecute(b *testing.B) {
	for _, n := range []int{0, 1, 2, 4, 8} {
		stages := make([]pipeline.Policy[int], n)
		for i := range stages {
			stages[i] = pipeline.PolicyFunc[int](passThrough)
		}
		p := pipeline.New(stages...)
		ctx := context.Background()
		b.Run(fmt.Sprintf("stages=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := p.Execute(ctx, work); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkExecuteParallel is Execute with one stage under contention.
func BenchmarkExecuteParallel(b *testing.B) {
	p := pipeline.New(pipeline.Policy[int](pipeline.PolicyFunc[int](passThrough)))
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := p.Execute(ctx, work); err != nil {
				b.Error(err)
			}
		}
	})
}

// BenchmarkAbandonAfter is one attempt run under the guard against work that
// ignores its context (a goroutine per attempt), with a cancelable context such
// as a timeout would give it.
func BenchmarkAbandonAfter(b *testing.B) {
	guard := pipeline.PolicyFunc[int](func(ctx context.Context, next pipeline.Next[int]) pipeline.Result[int] {
		return next.AbandonAfter(time.Second).Run(ctx)
	})
	p := pipeline.New(pipeline.Policy[int](guard))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Execute(ctx, work); err != nil {
			b.Fatal(err)
		}
	}
}

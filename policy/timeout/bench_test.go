package timeout_test

import (
	"context"
	"testing"
	"time"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/policy/timeout"
)

// BenchmarkTimeout is one call through a timeout stage that never fires, next to
// what context.WithTimeout alone costs.
func BenchmarkTimeout(b *testing.B) {
	ctx := context.Background()
	work := func(context.Context) (int, error) { return 1, nil }
	b.Run("context.WithTimeout", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			c, cancel := context.WithTimeout(ctx, time.Second)
			_, _ = work(c)
			cancel()
		}
	})
	b.Run("stage", func(b *testing.B) {
		stage, err := timeout.New[int](timeout.Config{Timeout: time.Second})
		if err != nil {
			b.Fatal(err)
		}
		p := pipeline.New[int](stage)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := p.Execute(ctx, work); err != nil {
				b.Fatal(err)
			}
		}
	})
}

package fleet

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/policy/breaker"
)

// BenchmarkWatched is the success path of a breaker stage alone, and of the
// same stage whose breaker a fleet watches: the fleet works beside the call
// path (a round a Refresh, on its own goroutine), so the two should cost the
// same. It needs PIPELINE_REDIS_ADDR, as the tests do.
func BenchmarkWatched(b *testing.B) {
	addr := os.Getenv("PIPELINE_REDIS_ADDR")
	if addr == "" {
		b.Skip("PIPELINE_REDIS_ADDR is not set")
	}
	ok := func(context.Context) (int, error) { return 1, nil }
	run := func(b *testing.B, p *pipeline.Pipeline[int]) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := p.Execute(context.Background(), ok); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("alone", func(b *testing.B) {
		brk, err := breaker.New(breaker.Config{Name: dep})
		if err != nil {
			b.Fatal(err)
		}
		run(b, pipeline.New[int](breaker.Guard[int](brk)))
	})
	b.Run("watched", func(b *testing.B) {
		client := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true})
		defer client.Close()
		f, err := New(Config{Redis: client, Namespace: fmt.Sprintf("bench-%d", os.Getpid()), Refresh: refresh})
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		brk, err := breaker.New(breaker.Config{Name: dep})
		if err != nil {
			b.Fatal(err)
		}
		stop, err := f.Watch(brk)
		if err != nil {
			b.Fatal(err)
		}
		defer stop()
		run(b, pipeline.New[int](breaker.Guard[int](brk)))
	})
}

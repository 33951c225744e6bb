package quota

import (
	"context"
	"fmt"
	"os"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/pipelinetest"
)

// Guard behaves as every stage must, refusing and waiting. Each quota
// is built outside the suite's bubbles (its goroutine and its Redis client
// are not the checks').
func TestQuotaConformance(t *testing.T) {
	t.Run("refusing", func(t *testing.T) {
		// Enough tokens that the suite's calls are never refused: the suite
		// checks the contract, not the refusals.
		c := newClient(t, redisAddr(t), Config{Namespace: namespace(t), Rate: 1e6, Burst: 1e6, Lease: 1e6, Processes: 1})
		pipelinetest.Run(t, func() pipeline.Policy[string] { return Guard[string](c.q) }, "value")
	})
	t.Run("waiting", func(t *testing.T) {
		// A lease of one token at a time: most of the suite's calls wait for
		// a fetch.
		c := newClient(t, redisAddr(t), Config{Namespace: namespace(t), Rate: 1000, Burst: 1, Lease: 1,
			Processes: 1, MaxWait: time.Hour})
		pipelinetest.Run(t, func() pipeline.Policy[string] { return Guard[string](c.q) }, "value")
	})
	// Without Redis the calls spend the local share, whose clock is the
	// callers' (the suite's synctest bubbles), not the clock of the
	// goroutine that built it (see TestQuotaWithoutRedisIsTimedOnItsCallersClock).
	t.Run("refusing without Redis", func(t *testing.T) {
		c := newClient(t, "127.0.0.1:1", Config{Namespace: namespace(t), Rate: 1e6, Burst: 1e6, Processes: 1})
		require.True(t, c.q.Degraded())
		pipelinetest.Run(t, func() pipeline.Policy[string] { return Guard[string](c.q) }, "value")
	})
	t.Run("waiting without Redis", func(t *testing.T) {
		c := newClient(t, "127.0.0.1:1", Config{Namespace: namespace(t), Rate: 1000, Burst: 1, Processes: 1, MaxWait: time.Hour})
		require.True(t, c.q.Degraded())
		pipelinetest.Run(t, func() pipeline.Policy[string] { return Guard[string](c.q) }, "value")
	})
}

// TestQuotaWithoutRedisIsTimedOnItsCallersClock builds a quota whose Redis
// is down outside a synctest bubble and calls it inside one: the local share
// admits its burst and then a call a token's interval apart on the bubble's
// clock. (The share was timed from its building, so every call in the bubble
// was refused with a hint of about 236,000 hours.)
func TestQuotaWithoutRedisIsTimedOnItsCallersClock(t *testing.T) {
	c := newClient(t, "127.0.0.1:1", Config{Namespace: namespace(t), Rate: 10, Burst: 2, Processes: 1})
	require.True(t, c.q.Degraded())
	synctest.Test(t, func(t *testing.T) {
		for i := range 2 {
			_, ok := c.q.Allow()
			assert.True(t, ok, "call %d of the burst", i)
		}
		wait, ok := c.q.Allow()
		require.False(t, ok)
		assert.Equal(t, 100*time.Millisecond, wait)
		time.Sleep(wait)
		_, ok = c.q.Allow()
		assert.True(t, ok)
	})
}

// Allow takes a token from the lease with one compare-and-swap, never waits
// on Redis and allocates nothing, whether it admits or refuses.
func BenchmarkQuotaAllow(b *testing.B) {
	addr := os.Getenv("PIPELINE_REDIS_ADDR")
	if addr == "" {
		b.Skip("PIPELINE_REDIS_ADDR is not set")
	}
	c := newClient(b, addr, Config{Namespace: fmt.Sprintf("bench-%d-%d", os.Getpid(), spaces.Add(1)),
		Rate: 1e6, Processes: 1})
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			c.q.Allow()
		}
	})
}

// BenchmarkQuotaGuard is the stage's two paths that never wait: a call
// admitted from a lease that will not run dry during the benchmark, and a
// call refused by a closed quota. Neither allocates.
func BenchmarkQuotaGuard(b *testing.B) {
	addr := os.Getenv("PIPELINE_REDIS_ADDR")
	if addr == "" {
		b.Skip("PIPELINE_REDIS_ADDR is not set")
	}
	ok := func(context.Context) (int, error) { return 1, nil }
	run := func(b *testing.B, q *Quota, admitted bool) {
		p := pipeline.New(Guard[int](q))
		if _, err := p.Execute(context.Background(), ok); (err == nil) != admitted {
			b.Fatalf("admitted %v, want %v", err == nil, admitted)
		}
		b.ReportAllocs()
		for b.Loop() {
			_, _ = p.Execute(context.Background(), ok)
		}
	}
	b.Run("admitted", func(b *testing.B) {
		c := newClient(b, addr, Config{Namespace: fmt.Sprintf("bench-%d-%d", os.Getpid(), spaces.Add(1)),
			Rate: maxRate, Burst: 1 << 40, Lease: 1 << 40, Processes: 1})
		run(b, c.q, true)
	})
	b.Run("refused", func(b *testing.B) {
		c := newClient(b, addr, Config{Namespace: fmt.Sprintf("bench-%d-%d", os.Getpid(), spaces.Add(1)),
			Rate: maxRate, Processes: 1})
		c.q.Close()
		run(b, c.q, false)
	})
}

package fleet

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/pipelinetest"
)

// QuotaGuard behaves as every stage must, refusing and waiting. Each quota
// is built outside the suite's bubbles (its goroutine and its Redis client
// are not the checks').
func TestQuotaConformance(t *testing.T) {
	t.Run("refusing", func(t *testing.T) {
		// Enough tokens that the suite's calls are never refused: the suite
		// checks the contract, not the refusals.
		c := newClient(t, redisAddr(t), QuotaConfig{Namespace: namespace(t), Rate: 1e6, Burst: 1e6, Lease: 1e6, Processes: 1})
		pipelinetest.Run(t, func() pipeline.Policy[string] { return QuotaGuard[string](c.q) }, "value")
	})
	t.Run("waiting", func(t *testing.T) {
		// A lease of one token at a time: most of the suite's calls wait for
		// a fetch.
		c := newClient(t, redisAddr(t), QuotaConfig{Namespace: namespace(t), Rate: 1000, Burst: 1, Lease: 1,
			Processes: 1, MaxWait: time.Hour})
		pipelinetest.Run(t, func() pipeline.Policy[string] { return QuotaGuard[string](c.q) }, "value")
	})
}

// Allow takes a token from the lease with one compare-and-swap, never waits
// on Redis and allocates nothing, whether it admits or refuses.
func BenchmarkQuotaAllow(b *testing.B) {
	addr := os.Getenv("PIPELINE_REDIS_ADDR")
	if addr == "" {
		b.Skip("PIPELINE_REDIS_ADDR is not set")
	}
	c := newClient(b, addr, QuotaConfig{Namespace: fmt.Sprintf("bench-%d-%d", os.Getpid(), spaces.Add(1)),
		Rate: 1e6, Processes: 1})
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			c.q.Allow()
		}
	})
}

package adaptive_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/budget"
	"github.com/resilience-go/pipeline/latency"
	"github.com/resilience-go/pipeline/policy/adaptive"
	"github.com/resilience-go/pipeline/policy/breaker"
	"github.com/resilience-go/pipeline/policy/hedge"
	"github.com/resilience-go/pipeline/policy/retry"
	"github.com/resilience-go/pipeline/policy/timeout"
)

var errDown = errors.New("dependency down")

// TestInTheCard builds timeout -> retry -> adaptive -> breaker -> hedge, the
// limiter sharing the hedge's estimator (FedElsewhere). A call whose retry
// finds the limit reached stops with the limiter's refusal: not retried, not
// charged to the budget, not seen by the breaker; and every success is
// recorded into the shared estimator once, by the hedge.
func TestInTheCard(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		est, err := latency.New(latency.Config{})
		require.NoError(t, err)
		l := mustNew(t, adaptive.Config{Estimator: est, FedElsewhere: true, InitialLimit: 1, MinLimit: 1, MaxLimit: 1})
		bud, err := budget.New(budget.Config{})
		require.NoError(t, err)
		brk, err := breaker.New(breaker.Config{})
		require.NoError(t, err)
		to, err := timeout.New[int](timeout.Config{Timeout: 10 * time.Second})
		require.NoError(t, err)
		re, err := retry.New[int](retry.Config{Budget: bud, Backoff: retry.Constant{Interval: 10 * time.Millisecond, Jitter: retry.NoJitter}})
		require.NoError(t, err)
		he, err := hedge.New[int](hedge.Config{Estimator: est, Breaker: brk, Budget: bud})
		require.NoError(t, err)
		stages := []pipeline.Policy[int]{to, re, adaptive.Guard[int](l), breaker.Guard[int](brk), he}
		assert.Empty(t, pipeline.Check(stages...))
		p := pipeline.New(stages...)

		for range 5 {
			_, err := p.Execute(t.Context(), func(context.Context) (int, error) { time.Sleep(time.Millisecond); return 1, nil })
			require.NoError(t, err)
		}
		_, n := est.Quantile(est.Now(), 0.5)
		assert.Equal(t, 5, n, "each success recorded once, by the hedge")

		// A second caller takes the one slot 5 ms in, while the first call
		// backs off for 10 ms after its failed attempt.
		release := make(chan struct{})
		go func() {
			time.Sleep(5 * time.Millisecond)
			_, _ = pipeline.New(adaptive.Guard[int](l)).Execute(context.Background(), func(context.Context) (int, error) { <-release; return 1, nil })
		}()
		var attempts atomic.Int32
		_, err = p.Execute(t.Context(), func(context.Context) (int, error) {
			attempts.Add(1)
			return 0, errDown
		})
		close(release)
		assert.EqualValues(t, 1, attempts.Load())
		stop, isStop := errors.AsType[*pipeline.StopError](err)
		require.True(t, isStop, "want a StopError, got %v", err)
		assert.Equal(t, "adaptive", stop.Stage, "the call stops with the limiter's refusal")
		assert.Equal(t, 1, stop.Attempts)
		assert.ErrorIs(t, err, errDown)
		assert.Equal(t, 1, brk.Snapshot().ConsecutiveFailures, "the breaker saw only the attempt that ran")
		assert.Equal(t, 0.0, bud.Utilization(), "the refused retry was refunded")
	})
}

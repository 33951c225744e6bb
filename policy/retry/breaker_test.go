package retry

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/budget"
	"github.com/resilience-go/pipeline/policy/breaker"
)

// TestBreakerTripStopsTheRetry puts the real breaker stage inside the retry:
// attempt 1 trips the breaker, attempt 2 is refused without calling fn.
func TestBreakerTripStopsTheRetry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		br, err := breaker.New(breaker.Config{ConsecutiveFailures: 1})
		require.NoError(t, err)
		bud := newBudget(t, budget.Config{})
		p := pipeline.New[int](mustNew[int](t, Config{Budget: bud, Backoff: Exponential{Jitter: NoJitter}}), breaker.Guard[int](br))
		start := time.Now()
		w := newWork(func(context.Context) (int, error) { return 503, errBoom })

		v, err := p.Execute(t.Context(), w.fn)

		assert.Len(t, w.attempts(), 1, "attempt 2 is refused without calling fn")
		assert.Equal(t, 200*time.Millisecond, time.Since(start), "100 ms backoff, then the 100 ms refusal pause")
		e := stopError(t, err)
		assert.Equal(t, "breaker", e.Stage)
		assert.Equal(t, pipeline.DependencyUnavailable, e.Reason)
		assert.Positive(t, e.RetryAfter, "the rest of the break")
		assert.LessOrEqual(t, e.RetryAfter, 15*time.Second)
		assert.Equal(t, 1, e.Attempts)
		assert.Same(t, errBoom, e.Err, "the last real attempt's error")
		assert.Zero(t, v, "the last real attempt's value was released when its retry was decided")
		assert.ErrorIs(t, err, pipeline.DependencyUnavailable)
		assert.Equal(t, 30.0, bud.Tokens(), "the refused retry is not charged")
	})
}

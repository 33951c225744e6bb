package bulkhead_test

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
	"github.com/resilience-go/pipeline/policy/breaker"
	"github.com/resilience-go/pipeline/policy/bulkhead"
	"github.com/resilience-go/pipeline/policy/retry"
	"github.com/resilience-go/pipeline/policy/timeout"
)

var errDown = errors.New("dependency down")

// TestARefusalInsideTheCardIsNotRetried builds timeout -> retry -> bulkhead
// -> breaker. A call whose retry finds the bulkhead full stops with the
// bulkhead's refusal: the retry does not try again, the budget is not
// charged, and the breaker never hears of it.
func TestARefusalInsideTheCardIsNotRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := mustNew(t, bulkhead.Config{MaxConcurrent: 1})
		bud, err := budget.New(budget.Config{})
		require.NoError(t, err)
		brk, err := breaker.New(breaker.Config{})
		require.NoError(t, err)
		to, err := timeout.New[int](timeout.Config{Timeout: 10 * time.Second})
		require.NoError(t, err)
		re, err := retry.New[int](retry.Config{Budget: bud, Backoff: retry.Constant{Interval: 10 * time.Millisecond, Jitter: retry.NoJitter}})
		require.NoError(t, err)
		stages := []pipeline.Policy[int]{to, re, bulkhead.Guard[int](b), breaker.Guard[int](brk)}
		assert.Empty(t, pipeline.Check(stages...))
		p := pipeline.New(stages...)

		// A second caller takes the one slot 5 ms in, while the first call
		// backs off for 10 ms after its failed attempt.
		release := make(chan struct{})
		go func() {
			time.Sleep(5 * time.Millisecond)
			_, _ = pipeline.New(bulkhead.Guard[int](b)).Execute(context.Background(), func(context.Context) (int, error) { <-release; return 1, nil })
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
		assert.Equal(t, "bulkhead", stop.Stage, "the call stops with the bulkhead's refusal")
		assert.Equal(t, 1, stop.Attempts)
		assert.ErrorIs(t, err, errDown)
		assert.InDelta(t, 30, bud.Tokens(), 0.5, "the refused retry was refunded")
		assert.Equal(t, 1, brk.Snapshot().ConsecutiveFailures, "the breaker saw only the attempt that ran")
	})
}

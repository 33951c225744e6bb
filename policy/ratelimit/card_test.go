package ratelimit_test

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
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/breaker"
	"github.com/resilience-go/pipeline/policy/ratelimit"
	"github.com/resilience-go/pipeline/policy/retry"
	"github.com/resilience-go/pipeline/policy/timeout"
)

var errDown = errors.New("dependency down")

// card builds timeout -> retry (paid by bud) -> ratelimit -> breaker.
func card(t *testing.T, l *ratelimit.Limiter, bud *budget.Budget, brk *breaker.Breaker) *pipeline.Pipeline[int] {
	t.Helper()
	to, err := timeout.New[int](timeout.Config{Timeout: 10 * time.Second})
	require.NoError(t, err)
	re, err := retry.New[int](retry.Config{Budget: bud, Backoff: retry.Constant{Interval: 10 * time.Millisecond, Jitter: retry.NoJitter}})
	require.NoError(t, err)
	stages := []pipeline.Policy[int]{to, re, ratelimit.Guard[int](l), breaker.Guard[int](brk)}
	assert.Empty(t, pipeline.Check(stages...), "the card with a rate limiter raises no problem")
	return pipeline.New(stages...)
}

// TestInsideTheRetryEveryAttemptPays: placed inside the retry, the limiter
// takes a token for every attempt, and a refused retry stops the call with
// the limiter's refusal: it is not retried, not charged to the budget, and
// not seen by the breaker.
func TestInsideTheRetryEveryAttemptPays(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := mustNew(t, ratelimit.Config{Rate: 1, Burst: 2})
		bud, err := budget.New(budget.Config{})
		require.NoError(t, err)
		brk, err := breaker.New(breaker.Config{})
		require.NoError(t, err)
		p := card(t, l, bud, brk)

		var attempts atomic.Int32
		start := time.Now()
		_, err = p.Execute(t.Context(), func(context.Context) (int, error) {
			attempts.Add(1)
			return 0, errDown
		})
		assert.EqualValues(t, 2, attempts.Load(), "two tokens, two attempts; the third is refused")
		stop, isStop := errors.AsType[*pipeline.StopError](err)
		require.True(t, isStop, "want a StopError, got %v", err)
		assert.Equal(t, "ratelimit", stop.Stage, "the retry stops with the limiter's refusal")
		assert.Equal(t, 2, stop.Attempts)
		assert.ErrorIs(t, err, errDown, "the last attempt's error stays reachable")
		// The bucket was full (2 tokens) and earns one a second: attempts at 0
		// and 10 ms took both, the retry at 20 ms found the next token 980 ms
		// away, and the retry's refusal pause took 100 ms of that hint.
		assert.Equal(t, 880*time.Millisecond, stop.RetryAfter)
		assert.Equal(t, 120*time.Millisecond, time.Since(start))
		assert.InDelta(t, 30-1+0.12*3, bud.Tokens(), 0.01,
			"one retry ran and was paid for, the refused one was refunded, and 120 ms refilled 0.36")
		assert.Equal(t, 2, brk.Snapshot().ConsecutiveFailures, "the breaker saw the two attempts that ran, not the refusal")
	})
}

// TestOutsideTheRetryACallPaysOnce: placed outside the retry, the limiter
// counts calls, whatever their retries.
func TestOutsideTheRetryACallPaysOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := mustNew(t, ratelimit.Config{Rate: 1, Burst: 1})
		re, err := retry.New[int](retry.Config{Backoff: retry.Constant{Interval: time.Millisecond, Jitter: retry.NoJitter}})
		require.NoError(t, err)
		p := pipeline.New(ratelimit.Guard[int](l), re)
		var attempts atomic.Int32
		_, err = p.Execute(t.Context(), func(context.Context) (int, error) {
			if attempts.Add(1) < 3 {
				return 0, outcome.MarkTransient(errDown)
			}
			return 1, nil
		})
		require.NoError(t, err)
		assert.EqualValues(t, 3, attempts.Load())
		assert.InDelta(t, 0, l.Tokens(), 0.01, "three attempts, one token")
	})
}

package throttle_test

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
	"github.com/resilience-go/pipeline/policy/retry"
	"github.com/resilience-go/pipeline/policy/throttle"
	"github.com/resilience-go/pipeline/policy/timeout"
)

// witness stands where a breaker goes, inside the throttle: it counts the
// attempts that reach it and the failures among them (what a breaker counts,
// outcome.Verdict.Failure), and refuses, as a breaker does, while open.
type witness struct {
	open               atomic.Bool
	attempts, failures atomic.Int32
}

func (w *witness) stage() pipeline.Policy[int] {
	return pipeline.PolicyFunc[int](func(ctx context.Context, next pipeline.Next[int]) pipeline.Result[int] {
		if w.open.Load() {
			return next.Refuse(ctx, &pipeline.StopError{Stage: "breaker", Reason: pipeline.DependencyUnavailable})
		}
		w.attempts.Add(1)
		r := next.Run(ctx)
		if r.Verdict.Failure() {
			w.failures.Add(1)
		}
		return r
	})
}

// TestInTheCard builds timeout -> retry (paid by a budget) -> throttle ->
// (breaker). A retry the throttle refuses stops the call with the
// throttle's refusal: it is not retried, not charged to the budget, and its
// verdict is no failure, so a breaker outside would not count it either.
func TestInTheCard(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		th := mustNew(t, throttle.Config{Name: "search", Rand: alwaysRefuse})
		bud, err := budget.New(budget.Config{})
		require.NoError(t, err)
		to, err := timeout.New[int](timeout.Config{Timeout: 10 * time.Second})
		require.NoError(t, err)
		re, err := retry.New[int](retry.Config{Budget: bud, Backoff: retry.Constant{Interval: 10 * time.Millisecond, Jitter: retry.NoJitter}})
		require.NoError(t, err)
		var outer outcome.Verdict
		w := &witness{}
		stages := []pipeline.Policy[int]{spy[int](&outer), to, re, throttle.Guard[int](th), w.stage()}
		assert.Empty(t, pipeline.Check(stages...), "the card with a throttle raises no problem")
		p := pipeline.New(stages...)

		var attempts atomic.Int32
		_, err = p.Execute(t.Context(), func(context.Context) (int, error) {
			attempts.Add(1)
			return 0, errDown
		})
		assert.EqualValues(t, 1, attempts.Load(), "the first attempt failed; the throttle refused the retry")
		stop, isStop := errors.AsType[*pipeline.StopError](err)
		require.True(t, isStop, "want a StopError, got %v", err)
		assert.Equal(t, "throttle", stop.Stage, "the retry stops with the throttle's refusal")
		assert.Equal(t, "search", stop.Name)
		assert.Equal(t, pipeline.DependencyUnavailable, stop.Reason)
		assert.Equal(t, 1, stop.Attempts)
		assert.ErrorIs(t, err, errDown, "the last attempt's error stays reachable")
		assert.GreaterOrEqual(t, bud.Tokens(), 30.0-0.01, "the refused retry was refunded")
		assert.False(t, outer.Failure(), "no breaker counts the call's end as the dependency's failure")
		assert.EqualValues(t, 1, w.attempts.Load(), "the stage inside saw the attempt that ran, not the refusal")
		assert.EqualValues(t, 1, w.failures.Load())
		requests, accepts := th.Counts()
		assert.Equal(t, 2, requests, "the failure, and the refused retry")
		assert.Zero(t, accepts)
	})
}

// TestAnInnerRefusalCountsForNothing puts an open breaker inside the
// throttle: every attempt is refused there, a self-imposed verdict the
// throttle counts as no request, so it never starts refusing on its own.
// The dependency's own 429, by contrast, counts.
func TestAnInnerRefusalCountsForNothing(t *testing.T) {
	th := mustNew(t, throttle.Config{Rand: alwaysRefuse})
	w := &witness{}
	w.open.Store(true)
	p := pipeline.New(throttle.Guard[int](th), w.stage())
	for range 100 {
		_, err := p.Execute(context.Background(), ok)
		stop, isStop := errors.AsType[*pipeline.StopError](err)
		require.True(t, isStop)
		assert.Equal(t, "breaker", stop.Stage)
	}
	requests, accepts := th.Counts()
	assert.Zero(t, requests)
	assert.Zero(t, accepts)

	w.open.Store(false)
	_, err := p.Execute(context.Background(), func(context.Context) (int, error) {
		return 0, outcome.MarkThrottled(errDown, time.Second)
	})
	assert.ErrorIs(t, err, errDown, "the dependency's own 429 passes through")
	requests, accepts = th.Counts()
	assert.Equal(t, 1, requests, "and counts as a request it did not accept")
	assert.Zero(t, accepts)
}

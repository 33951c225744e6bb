package ceiling_test

import (
	"context"
	"math/rand/v2"
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
	"github.com/resilience-go/pipeline/policy/ceiling"
	"github.com/resilience-go/pipeline/policy/hedge"
	"github.com/resilience-go/pipeline/policy/retry"
	"github.com/resilience-go/pipeline/policy/timeout"
)

// noBackoff retries at once, so that the times below are the ceiling's alone.
var noBackoff = retry.BackoffFunc(func(int, outcome.Verdict, rand.Source) time.Duration { return 0 })

// Inside the retry, the ceiling cuts an attempt that hangs, the retry tries
// again, and the call succeeds, all well inside the whole call's timeout.
func TestCeilingInsideTheRetryCutsAHungAttempt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		est := warm(t, ceiling.DefaultMinSamples, 100*time.Millisecond)
		c := stage(t, ceiling.Config{Estimator: est})
		limit, armed := c.Limit(est.Now())
		require.True(t, armed)
		whole, err := timeout.New[string](timeout.Config{Timeout: 30 * time.Second})
		require.NoError(t, err)
		bud, err := budget.New(budget.Config{})
		require.NoError(t, err)
		rt, err := retry.New[string](retry.Config{Budget: bud, Backoff: noBackoff})
		require.NoError(t, err)
		br, err := breaker.New(breaker.Config{})
		require.NoError(t, err)
		var verdicts []outcome.Kind // of each attempt, as the retry sees it
		seen := pipeline.PolicyFunc[string](func(ctx context.Context, next pipeline.Next[string]) pipeline.Result[string] {
			r := next.Run(ctx)
			verdicts = append(verdicts, r.Verdict.Kind)
			return r
		})
		stages := []pipeline.Policy[string]{whole, rt, seen, c, breaker.Guard[string](br)}
		assert.Empty(t, pipeline.Check(stages...))

		var attempts atomic.Int32
		start := time.Now()
		v, err := pipeline.New(stages...).Execute(t.Context(), func(ctx context.Context) (string, error) {
			if attempts.Add(1) == 1 {
				return hang(ctx)
			}
			return "answer", nil
		})
		require.NoError(t, err)
		assert.Equal(t, "answer", v)
		assert.Equal(t, int32(2), attempts.Load())
		assert.Equal(t, limit, time.Since(start), "the hung attempt was cut at its ceiling, not at the call's 30 s")
		assert.Equal(t, []outcome.Kind{outcome.Transient, outcome.OK}, verdicts, "the cut attempt is Transient: retried")
		assert.Equal(t, breaker.Closed, br.State())
	})
}

// The full card with a hedge sharing the ceiling's estimator: the hedge
// feeds it, the ceiling only reads it (and records its cuts). A slow first
// copy is hedged long before the ceiling; a hung attempt whose hedge hangs
// too is cut at the ceiling and retried.
func TestCeilingAroundAHedgeSharingItsEstimator(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		est := warm(t, ceiling.DefaultMinSamples, 100*time.Millisecond)
		c := stage(t, ceiling.Config{Estimator: est, FedElsewhere: true})
		limit, _ := c.Limit(est.Now())
		h, err := hedge.New[string](hedge.Config{Estimator: est, Repeatable: true})
		require.NoError(t, err)
		rt, err := retry.New[string](retry.Config{Backoff: noBackoff})
		require.NoError(t, err)
		pl := pipeline.New(rt, pipeline.Policy[string](c), h)

		var copies atomic.Int32
		before := samples(est)
		start := time.Now()
		v, err := pl.Execute(t.Context(), func(ctx context.Context) (string, error) {
			switch copies.Add(1) {
			case 1, 2: // the first attempt and its hedge both hang
				return hang(ctx)
			}
			time.Sleep(50 * time.Millisecond)
			return "answer", nil
		})
		require.NoError(t, err)
		assert.Equal(t, "answer", v)
		assert.Equal(t, limit+50*time.Millisecond, time.Since(start))
		assert.GreaterOrEqual(t, copies.Load(), int32(3))
		assert.Equal(t, before+2, samples(est), "one cut (the ceiling's) and one success (the hedge's): nothing counted twice")
	})
}

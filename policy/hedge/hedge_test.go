package hedge_test

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
	"github.com/resilience-go/pipeline/criticality"
	"github.com/resilience-go/pipeline/internal/hedgerule"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/pipelinetest"
	"github.com/resilience-go/pipeline/policy/hedge"
	"github.com/resilience-go/pipeline/policy/timeout"
)

var errDown = errors.New("down")

func TestAFastCallIsNeverHedged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := stage(t, hedge.Config{})
		w := &work{plans: []copyPlan{{after: 9 * time.Millisecond, value: "first"}}}
		v, took, err := execute(t.Context(), p, w, nil)
		require.NoError(t, err)
		assert.Equal(t, "first", v)
		assert.Equal(t, 9*time.Millisecond, took)
		assert.EqualValues(t, 1, w.calls.Load())
	})
}

func TestASlowCallIsHedgedAfterTheDelayAndTheFasterCopyWins(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ev := new(events)
		p := stage(t, hedge.Config{})
		w := &work{plans: []copyPlan{
			{after: time.Second, value: "first"},
			{after: 3 * time.Millisecond, value: "hedge"},
		}}
		before := pipelinetest.Goroutines()
		v, took, err := execute(t.Context(), p, w, ev)
		require.NoError(t, err)
		assert.Equal(t, "hedge", v)
		// The estimate is 1 ms, so the delay is the 10 ms minimum.
		assert.Equal(t, hedgerule.DefaultMinDelay+3*time.Millisecond, took)
		assert.EqualValues(t, 2, w.calls.Load())
		assert.Equal(t, []int{0}, w.canceledCopies(), "the overtaken first copy is cancelled")
		assert.Zero(t, w.running.Load(), "a copy was still running when Execute returned")
		synctest.Wait()
		assert.Equal(t, before, pipelinetest.Goroutines())
		require.Len(t, ev.named("hedge.sent"), 1)
		assert.Equal(t, hedge.Hedged{Attempt: 1, Hedge: 1, Delay: hedgerule.DefaultMinDelay}, ev.named("hedge.sent")[0])
	})
}

func TestTheFirstCopyCanStillWinAndTheLoserIsReleased(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var released []string
		p := stage(t, hedge.Config{})
		w := &work{plans: []copyPlan{
			{after: 15 * time.Millisecond, value: "first"},
			{after: time.Second, value: "hedge"},
		}}
		v, took, err := execute(t.Context(), p, w, nil, pipeline.Options[string]{Release: func(v string) { released = append(released, v) }})
		require.NoError(t, err)
		assert.Equal(t, "first", v)
		assert.Equal(t, 15*time.Millisecond, took)
		assert.Equal(t, []int{1}, w.canceledCopies())
		assert.Equal(t, []string{"canceled hedge"}, released)
	})
}

func TestTheDelayIsTheQuantileOfTheEstimator(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		est := warm(t, 100, 40*time.Millisecond)
		p := stage(t, hedge.Config{Estimator: est})
		want, _ := est.Quantile(est.Now(), hedgerule.DefaultQuantile)
		require.Greater(t, want, hedgerule.DefaultMinDelay)
		ev := new(events)
		w := &work{plans: []copyPlan{{after: time.Second}, {after: time.Millisecond, value: "hedge"}}}
		_, took, err := execute(t.Context(), p, w, ev)
		require.NoError(t, err)
		assert.Equal(t, want+time.Millisecond, took)
		assert.Equal(t, want, ev.named("hedge.sent")[0].(hedge.Hedged).Delay)
	})
}

func TestNoHedgeUntilTheEstimatorHasEnoughSamples(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		est := warm(t, 0, 0)
		p := stage(t, hedge.Config{Estimator: est, MinSamples: 3})
		for i := range 3 {
			w := &work{plans: []copyPlan{{after: 50 * time.Millisecond, value: "only"}}}
			_, _, err := execute(t.Context(), p, w, nil)
			require.NoError(t, err)
			assert.EqualValues(t, 1, w.calls.Load(), "call %d was hedged with %d samples", i, i)
		}
		assert.Equal(t, 3, samples(est), "every successful attempt feeds the estimator")
		w := &work{plans: []copyPlan{{after: time.Second}, {after: time.Millisecond, value: "hedge"}}}
		v, _, err := execute(t.Context(), p, w, nil)
		require.NoError(t, err)
		assert.Equal(t, "hedge", v)
	})
}

func TestOnlyRepeatableCallsAreHedged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, err := hedge.New[string](hedge.Config{Estimator: warm(t, 20, time.Millisecond)})
		require.NoError(t, err)
		plans := []copyPlan{{after: time.Second, value: "first"}, {after: time.Millisecond, value: "hedge"}}

		w := &work{plans: plans}
		v, _, err := execute(t.Context(), p, w, nil)
		require.NoError(t, err)
		assert.Equal(t, "first", v, "an unmarked call was hedged")

		w = &work{plans: plans}
		v, _, err = execute(hedge.Repeatable(t.Context()), p, w, nil)
		require.NoError(t, err)
		assert.Equal(t, "hedge", v)
		assert.True(t, hedge.IsRepeatable(hedge.Repeatable(t.Context())))
		assert.False(t, hedge.IsRepeatable(t.Context()))
	})
}

func TestAFailedCopyWaitsForTheOthers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := stage(t, hedge.Config{})
		w := &work{plans: []copyPlan{
			{after: 20 * time.Millisecond, err: errDown},
			{after: 30 * time.Millisecond, value: "hedge"},
		}}
		v, took, err := execute(t.Context(), p, w, nil)
		require.NoError(t, err)
		assert.Equal(t, "hedge", v)
		assert.Equal(t, 40*time.Millisecond, took)
	})
}

func TestAFailureBeforeTheDelayReturnsAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := stage(t, hedge.Config{})
		w := &work{plans: []copyPlan{{after: 2 * time.Millisecond, err: errDown}}}
		_, took, err := execute(t.Context(), p, w, nil)
		assert.ErrorIs(t, err, errDown)
		assert.Equal(t, 2*time.Millisecond, took)
		assert.EqualValues(t, 1, w.calls.Load(), "hedging is not retrying")
	})
}

func TestAPermanentResultIsAcceptable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := stage(t, hedge.Config{})
		w := &work{plans: []copyPlan{
			{after: time.Second, value: "first"},
			{after: time.Millisecond, err: outcome.MarkPermanent(errDown)},
		}}
		_, took, err := execute(t.Context(), p, w, nil)
		assert.ErrorIs(t, err, errDown)
		assert.Equal(t, 11*time.Millisecond, took)
	})
}

func TestWhenEveryCopyFailsTheLastOneIsReturnedAndTheRestReleased(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var released []string
		p := stage(t, hedge.Config{MaxAttempts: 3})
		errHedge := errors.New("hedge down")
		w := &work{plans: []copyPlan{
			{after: 50 * time.Millisecond, value: "a", err: errDown},
			{after: 15 * time.Millisecond, value: "b", err: errHedge},
			{after: 100 * time.Millisecond, value: "c", err: errDown},
		}}
		// Copies start at 0, 10 and 20 ms and fail at 50, 25 and 120 ms.
		v, took, err := execute(t.Context(), p, w, nil, pipeline.Options[string]{Release: func(v string) { released = append(released, v) }})
		assert.Equal(t, "c", v)
		assert.ErrorIs(t, err, errDown)
		assert.Equal(t, 120*time.Millisecond, took)
		assert.ElementsMatch(t, []string{"a", "b"}, released)
	})
}

func TestMaxAttemptsSpacesTheHedgesOneDelayApart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ev := new(events)
		p := stage(t, hedge.Config{MaxAttempts: 3})
		w := &work{plans: []copyPlan{
			{after: time.Second, value: "a"},
			{after: time.Second, value: "b"},
			{after: 5 * time.Millisecond, value: "c"},
		}}
		v, took, err := execute(t.Context(), p, w, ev)
		require.NoError(t, err)
		assert.Equal(t, "c", v)
		assert.Equal(t, 25*time.Millisecond, took)
		assert.Len(t, ev.named("hedge.sent"), 2)
		assert.ElementsMatch(t, []int{0, 1}, w.canceledCopies())
	})
}

func TestTheCallersCancellationEndsEveryCopy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := stage(t, hedge.Config{})
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Millisecond)
		defer cancel()
		w := &work{plans: []copyPlan{{after: time.Second}, {after: time.Second}}}
		_, took, err := execute(ctx, p, w, nil)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Equal(t, 30*time.Millisecond, took)
		assert.ElementsMatch(t, []int{0, 1}, w.canceledCopies())
	})
}

func TestTheEstimatorSeesSuccessesAndTheOvertakenFirstCopy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		est := warm(t, 20, time.Millisecond)
		p := stage(t, hedge.Config{Estimator: est})

		w := &work{plans: []copyPlan{{after: 2 * time.Millisecond, err: errDown}}}
		_, _, _ = execute(t.Context(), p, w, nil)
		assert.Equal(t, 20, samples(est), "a failure is not a latency sample")

		w = &work{plans: []copyPlan{{after: time.Second}, {after: 5 * time.Millisecond, value: "hedge"}}}
		_, _, err := execute(t.Context(), p, w, nil)
		require.NoError(t, err)
		// The hedge's own 5 ms, and the first copy's 15 ms: at least what it took.
		assert.Equal(t, 22, samples(est))
		top, _ := est.Quantile(est.Now(), 1)
		assert.InEpsilon(t, float64(15*time.Millisecond), float64(top), 0.2)
	})
}

func TestAPanicInAHedgeReachesTheCaller(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := stage(t, hedge.Config{})
		w := &work{plans: []copyPlan{
			{after: 20 * time.Millisecond, value: "first"},
			{after: 5 * time.Millisecond, panics: "boom"},
		}}
		defer func() {
			pe, ok := recover().(*pipeline.PanicError)
			require.True(t, ok, "the hedge's panic did not reach the caller as a *pipeline.PanicError")
			assert.Equal(t, "boom", pe.Value)
			assert.Zero(t, w.running.Load())
		}()
		_, _, _ = execute(t.Context(), p, w, nil)
		t.Fatal("Execute returned normally")
	})
}

func TestAPanicInTheFirstCopyStopsTheHedge(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := stage(t, hedge.Config{})
		w := &work{plans: []copyPlan{
			{after: 20 * time.Millisecond, panics: "boom"},
			{after: time.Second, value: "hedge"},
		}}
		func() {
			defer func() { assert.Equal(t, "boom", recover()) }()
			_, _, _ = execute(t.Context(), p, w, nil)
		}()
		assert.Equal(t, []int{1}, w.canceledCopies())
		assert.Zero(t, w.running.Load())
		// The stage is not wedged.
		w = &work{plans: []copyPlan{{after: time.Millisecond, value: "ok"}}}
		v, _, err := execute(t.Context(), p, w, nil)
		require.NoError(t, err)
		assert.Equal(t, "ok", v)
	})
}

func TestACopyThatIgnoresCancellationIsAbandonedByTheTimeoutsGuard(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		deadline, err := timeout.New[string](timeout.Config{Timeout: 5 * time.Second, Abandon: true})
		require.NoError(t, err)
		h := stage(t, hedge.Config{})
		var copies atomic.Int32
		firstReturned := make(chan struct{})
		start := time.Now()
		v, err := pipeline.New(deadline, pipeline.Policy[string](h)).Execute(t.Context(), func(ctx context.Context) (string, error) {
			if copies.Add(1) == 1 {
				defer close(firstReturned)
				time.Sleep(time.Second) // a second of work that ignores its context
				return "first", nil
			}
			time.Sleep(time.Millisecond)
			return "hedge", nil
		})
		require.NoError(t, err)
		assert.Equal(t, "hedge", v)
		// The hedge wins at 11 ms; the first copy is abandoned one grace (the
		// timeout's default, 50 ms) later.
		assert.Equal(t, 11*time.Millisecond+50*time.Millisecond, time.Since(start))
		<-firstReturned // the abandoned copy ends on its own, after the call returned
	})
}

func TestAFirstCopyThatFailedIsNoLatencySampleWhenTheHedgeWins(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		est := warm(t, 20, time.Millisecond)
		p := stage(t, hedge.Config{Estimator: est})
		w := &work{plans: []copyPlan{
			{after: 15 * time.Millisecond, err: errDown},
			{after: 20 * time.Millisecond, value: "hedge"},
		}}
		v, _, err := execute(t.Context(), p, w, nil)
		require.NoError(t, err)
		assert.Equal(t, "hedge", v)
		assert.Equal(t, 21, samples(est), "only the hedge's success is a sample")
	})
}

func TestAcceptable(t *testing.T) {
	for _, tc := range []struct {
		v    outcome.Verdict
		want bool
	}{
		{outcome.Verdict{}, true},
		{outcome.Verdict{Kind: outcome.Permanent}, true},
		{outcome.Verdict{Kind: outcome.Permanent, Canceled: true}, false},
		{outcome.Verdict{Kind: outcome.Permanent, SelfImposed: true}, false},
		{outcome.Verdict{Kind: outcome.Transient}, false},
		{outcome.Verdict{Kind: outcome.Throttled}, false},
	} {
		assert.Equal(t, tc.want, hedgerule.Acceptable(tc.v), "%+v", tc.v)
	}
}

func TestDelayAndPermitAreTheStagesDecisions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, err := budget.New(budget.Config{Capacity: 1, RefillPerSecond: 0.001})
		require.NoError(t, err)
		est := warm(t, 19, 30*time.Millisecond)
		p := stage(t, hedge.Config{Estimator: est, Budget: b, MaxExtra: 1})
		_, armed := hedge.RuleOf(p).Delay(est.Now())
		assert.False(t, armed, "19 samples")
		est.Record(est.Now(), 30*time.Millisecond)
		d, armed := hedge.RuleOf(p).Delay(est.Now())
		assert.True(t, armed)
		assert.InEpsilon(t, float64(30*time.Millisecond), float64(d), 0.2)
		assert.Equal(t, "", hedge.RuleOf(p).Permit(criticality.Default), "the budget pays one hedge")
		assert.Equal(t, "extra", hedge.RuleOf(p).Permit(criticality.Default), "one armed attempt earns one hedge at MaxExtra 1")
		hedge.RuleOf(p).Delay(est.Now())
		assert.Equal(t, "budget", hedge.RuleOf(p).Permit(criticality.Default))
	})
}

package hedge_test

import (
	"context"
	"math"
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
	"github.com/resilience-go/pipeline/policy/breaker"
	"github.com/resilience-go/pipeline/policy/hedge"
)

// slowFirst is a call whose first copy takes a second and whose hedge would take
// a millisecond.
func slowFirst() *work {
	return &work{plans: []copyPlan{{after: time.Second, value: "first"}, {after: time.Millisecond, value: "hedge"}}}
}

func TestEachHedgeCostsABudgetTokenAndNoneIsSentWithout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, err := budget.New(budget.Config{Capacity: 1, RefillPerSecond: 0.001})
		require.NoError(t, err)
		ev := new(events)
		p := stage(t, hedge.Config{Budget: b, MaxExtra: 1})

		v, _, err := execute(t.Context(), p, slowFirst(), ev)
		require.NoError(t, err)
		assert.Equal(t, "hedge", v)
		assert.Less(t, b.Tokens(), 1.0, "the hedge was not paid for")

		v, took, err := execute(t.Context(), p, slowFirst(), ev)
		require.NoError(t, err)
		assert.Equal(t, "first", v, "a hedge was sent that the budget could not pay for")
		assert.Equal(t, time.Second, took)
		require.Len(t, ev.named("hedge.skipped"), 1)
		assert.Equal(t, hedge.Skipped{Attempt: 1, Why: "budget"}, ev.named("hedge.skipped")[0])
	})
}

func TestAHedgeRefusedInsideIsRefunded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, err := budget.New(budget.Config{Capacity: 1, RefillPerSecond: 0.001})
		require.NoError(t, err)
		p := stage(t, hedge.Config{Budget: b})
		// An inner stage that refuses every copy but the first, as a limiter would.
		var copies atomic.Int32
		refuser := pipeline.PolicyFunc[string](func(ctx context.Context, next pipeline.Next[string]) pipeline.Result[string] {
			if copies.Add(1) > 1 {
				return pipeline.Result[string]{Err: errDown, Verdict: outcome.Verdict{Kind: outcome.Throttled, SelfImposed: true}}
			}
			return next.Run(ctx)
		})
		w := &work{plans: []copyPlan{{after: 20 * time.Millisecond, value: "first"}}}
		v, err := pipeline.New(p, refuser).Execute(t.Context(), w.fn)
		require.NoError(t, err)
		assert.Equal(t, "first", v)
		assert.EqualValues(t, 2, copies.Load())
		assert.InDelta(t, 1.0, b.Tokens(), 0.001, "a refused hedge was charged")
	})
}

func TestNoHedgeUnlessTheBreakerIsClosedAndCalm(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		br, err := breaker.New(breaker.Config{ConsecutiveFailures: 4})
		require.NoError(t, err)
		p := stage(t, hedge.Config{Breaker: br})
		fail := func() {
			tk, err := br.Admit()
			require.NoError(t, err)
			br.Done(tk, outcome.Verdict{Kind: outcome.Transient})
		}

		fail() // pressure 1/4
		v, _, _ := execute(t.Context(), p, slowFirst(), nil)
		assert.Equal(t, "hedge", v, "pressure below one half")

		fail() // pressure 2/4: at the limit, the call is not even armed
		w := slowFirst()
		v, _, _ = execute(t.Context(), p, w, nil)
		assert.Equal(t, "first", v)
		assert.EqualValues(t, 1, w.calls.Load())

		fail()
		fail() // open
		require.Equal(t, breaker.Open, br.State())
		v, _, _ = execute(t.Context(), p, slowFirst(), nil)
		assert.Equal(t, "first", v)
	})
}

func TestTheBreakerIsAskedAgainWhenTheHedgeIsDue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		br, err := breaker.New(breaker.Config{ConsecutiveFailures: 2})
		require.NoError(t, err)
		p := stage(t, hedge.Config{Breaker: br})
		ev := new(events)
		// While the first copy runs, another call fails: the breaker is at one
		// half by the time the hedge is due.
		w := &work{plans: []copyPlan{{after: 30 * time.Millisecond, value: "first"}, {after: time.Millisecond, value: "hedge"}}}
		go func() {
			time.Sleep(5 * time.Millisecond)
			tk, err := br.Admit()
			assert.NoError(t, err)
			br.Done(tk, outcome.Verdict{Kind: outcome.Transient})
		}()
		v, _, _ := execute(t.Context(), p, w, ev)
		assert.Equal(t, "first", v)
		require.Len(t, ev.named("hedge.skipped"), 1)
		assert.Equal(t, "breaker", ev.named("hedge.skipped")[0].(hedge.Skipped).Why)
	})
}

// TestHedgesAddAtMostMaxExtra: however often a hedge falls due, the stage
// sends no more hedges than MaxExtra of the attempts it armed, with one
// attempt's hedges saved up at the start; a hedge the budget refuses is not
// spent.
func TestHedgesAddAtMostMaxExtra(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cfg   hedge.Config
		armed int
		sent  int
	}{
		{"a quarter", hedge.Config{MaxExtra: 0.25}, 40, 1 + 40/4},
		{"the default: 1 - Quantile", hedge.Config{}, 200, 1 + 200/20},
		{"1 - Quantile, never under hedgerule.MinExtra", hedge.Config{Quantile: 1}, 200, 1 + 200/100},
		{"three copies: two saved, one a call", hedge.Config{MaxAttempts: 3, MaxExtra: 1}, 10, 2 + 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			est := warm(t, hedgerule.DefaultMinSamples, time.Millisecond)
			tc.cfg.Estimator = est
			p := stage(t, tc.cfg)
			sent := 0
			for range tc.armed {
				for hedge.RuleOf(p).Permit(criticality.Default) == "" { // every due hedge the stage allows
					sent++
				}
				_, armed := hedge.RuleOf(p).Delay(est.Now())
				require.True(t, armed)
			}
			for hedge.RuleOf(p).Permit(criticality.Default) == "" {
				sent++
			}
			assert.Equal(t, tc.sent, sent)
			assert.Equal(t, "extra", hedge.RuleOf(p).Permit(criticality.Default))
		})
	}
}

func TestAHedgeTheBudgetRefusesIsNotSpent(t *testing.T) {
	b, err := budget.New(budget.Config{Capacity: 1, RefillPerSecond: 0.001})
	require.NoError(t, err)
	_, _ = b.Withdraw(criticality.Default)
	p := stage(t, hedge.Config{Budget: b})
	assert.Equal(t, "budget", hedge.RuleOf(p).Permit(criticality.Default))
	assert.Equal(t, "budget", hedge.RuleOf(p).Permit(criticality.Default), "the hedge saved up is still there")
}

func TestMaxExtraIsValidated(t *testing.T) {
	for _, bad := range []hedge.Config{{MaxExtra: -0.1}, {MaxExtra: 1.5}, {MaxAttempts: 3, MaxExtra: 2.5}, {MaxExtra: math.NaN()}} {
		err := bad.Validate()
		require.Error(t, err, "%+v", bad)
		assert.Contains(t, err.Error(), "MaxExtra")
	}
	assert.NoError(t, hedge.Config{MaxAttempts: 3, MaxExtra: 2}.Validate())
}

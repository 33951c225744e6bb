package standard_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/budget"
	"github.com/resilience-go/pipeline/latency"
	"github.com/resilience-go/pipeline/policy/breaker"
	"github.com/resilience-go/pipeline/policy/hedge"
	"github.com/resilience-go/pipeline/policy/retry"
	"github.com/resilience-go/pipeline/policy/timeout"
	"github.com/resilience-go/pipeline/standard"
)

// lockedSource is a seeded random source safe for concurrent use, as the
// retry's Rand must be.
type lockedSource struct {
	mu  sync.Mutex
	src rand.Source
}

func (l *lockedSource) Uint64() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.src.Uint64()
}

func seeded() *lockedSource { return &lockedSource{src: rand.NewPCG(1, 2)} }

// card is the pipeline docs/standard.md describes, built by hand, with the
// state it shares.
type card struct {
	p     *pipeline.Pipeline[string]
	brk   *breaker.Breaker
	funds *budget.Budget
	est   *latency.Estimator
}

func handBuilt(t *testing.T) card {
	t.Helper()
	funds, err := budget.New(budget.Config{})
	require.NoError(t, err)
	brk, err := breaker.New(breaker.Config{Recovery: &breaker.Recovery{}, Rand: seeded()})
	require.NoError(t, err)
	est, err := latency.New(latency.Config{})
	require.NoError(t, err)
	whole, err := timeout.New[string](timeout.Config{Timeout: 30 * time.Second})
	require.NoError(t, err)
	retries, err := retry.New[string](retry.Config{Budget: funds, Rand: seeded()})
	require.NoError(t, err)
	hedges, err := hedge.New[string](hedge.Config{Breaker: brk, Budget: funds, Estimator: est})
	require.NoError(t, err)
	each, err := timeout.New[string](timeout.Config{Timeout: 10 * time.Second})
	require.NoError(t, err)
	p := pipeline.New(whole, retries, breaker.Guard[string](brk), hedges, each)
	return card{p, brk, funds, est}
}

func TestThePresetIsTheCard(t *testing.T) {
	preset := build(t, standard.Config{})
	hand := handBuilt(t)
	want := []pipeline.StageInfo{
		{Kind: "timeout", Timeout: 30 * time.Second},
		{Kind: "retry"},
		{Kind: "breaker"},
		{Kind: "hedge"},
		{Kind: "timeout", Timeout: 10 * time.Second},
	}
	assert.Equal(t, want, preset.Stages())
	assert.Equal(t, want, hand.p.Stages())
	assert.Empty(t, preset.Check(), "the preset raises no composition warning")
	assert.Empty(t, build(t, standard.Config{NoHedge: true}).Check())
}

// The preset and the hand-built card, fed the same calls on virtual time with
// the same random seeds, answer every call alike, raise the same events, and
// end with their shared state alike: the same defaults, wired the same way.
func TestThePresetBehavesAsTheCard(t *testing.T) {
	type outcome struct {
		v, err string
		events []string
		tokens float64       // the shared budget's, after the call
		p50    time.Duration // the shared estimator's, after the call
	}
	run := func(t *testing.T, p *pipeline.Pipeline[string], funds *budget.Budget, est *latency.Estimator) (calls []outcome) {
		var mu sync.Mutex
		var events []string
		p = p.With(pipeline.Options[string]{OnEvent: func(_ context.Context, _ pipeline.Source, e pipeline.Event) {
			mu.Lock()
			events = append(events, fmt.Sprintf("%T%+v", e, e))
			mu.Unlock()
		}})
		for i := range 150 {
			ctx := t.Context()
			if i%3 == 0 {
				ctx = hedge.Repeatable(ctx)
			}
			copies := 0
			v, err := p.Execute(ctx, func(ctx context.Context) (string, error) {
				mu.Lock()
				copies++
				first := copies == 1
				mu.Unlock()
				switch {
				case i >= 40 && i < 50: // an outage: the breaker trips and recovers
					return "", errDown
				case (i == 7 || i == 21 || i == 24 || i == 140) && first: // a first copy hangs: cut by the attempt timeout, or hedged if repeatable
					<-ctx.Done()
					return "", ctx.Err()
				}
				time.Sleep(time.Duration(1+i%5) * time.Millisecond) // the dependency's latency
				return fmt.Sprint("ok", i), nil
			})
			time.Sleep(250 * time.Millisecond) // the next call
			mu.Lock()
			slices.Sort(events) // hedged copies may report in any order
			o := outcome{v: v, events: events, tokens: funds.Tokens()}
			o.p50, _ = est.Quantile(est.Now(), 0.5)
			events = nil
			mu.Unlock()
			if err != nil {
				o.err = err.Error()
			}
			calls = append(calls, o)
		}
		return calls
	}
	var want, got []outcome
	var wantSnap, gotSnap breaker.Snapshot
	var wantTokens, gotTokens float64
	var wantP95, gotP95 time.Duration
	synctest.Test(t, func(t *testing.T) {
		hand := handBuilt(t)
		want = run(t, hand.p, hand.funds, hand.est)
		wantSnap, wantTokens = hand.brk.Snapshot(), hand.funds.Tokens()
		wantP95, _ = hand.est.Quantile(hand.est.Now(), 0.95)
	})
	synctest.Test(t, func(t *testing.T) {
		preset := build(t, standard.Config{Breaker: breaker.Config{Rand: seeded()}, Retry: retry.Config{Rand: seeded()}})
		got = run(t, preset.Pipeline, preset.Budget, preset.Estimator)
		gotSnap, gotTokens = preset.Breaker.Snapshot(), preset.Budget.Tokens()
		gotP95, _ = preset.Estimator.Quantile(preset.Estimator.Now(), 0.95)
	})
	require.Equal(t, want, got)
	assert.Equal(t, wantSnap, gotSnap)
	assert.Equal(t, wantTokens, gotTokens)
	assert.Equal(t, wantP95, gotP95)
	// The scenario exercised what it is meant to compare.
	joined := fmt.Sprint(want)
	for _, seen := range []string{"hedge.Hedged", "retry.Scheduled", "timeout.TimedOut", "dependency unavailable"} {
		assert.Contains(t, joined, seen)
	}
}

// Each override reaches the stage it names, and only that one.
func TestEveryOverrideReachesItsStage(t *testing.T) {
	t.Run("Hedge", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			p := build(t, standard.Config{Hedge: hedge.Config{MinDelay: 70 * time.Millisecond, MinSamples: 1}})
			p.Estimator.Record(p.Estimator.Now(), time.Millisecond)
			start := time.Now()
			var copies int
			var mu sync.Mutex
			_, err := p.Execute(hedge.Repeatable(t.Context()), func(ctx context.Context) (string, error) {
				mu.Lock()
				copies++
				first := copies == 1
				mu.Unlock()
				if first {
					<-ctx.Done()
					return "", ctx.Err()
				}
				return "hedge", nil
			})
			require.NoError(t, err)
			assert.Equal(t, 70*time.Millisecond, time.Since(start), "hedged after MinDelay, armed after one sample")
		})
	})
	t.Run("Budget", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			p := build(t, standard.Config{Budget: budget.Config{Capacity: 1}, Breaker: breaker.Config{ConsecutiveFailures: 100}})
			_, err := p.Execute(t.Context(), func(context.Context) (string, error) { return "", errDown })
			stop, ok := errors.AsType[*pipeline.StopError](err)
			require.True(t, ok)
			assert.Equal(t, pipeline.BudgetExhausted, stop.Reason, "one token paid one retry, then none")
			assert.Equal(t, 2, stop.Attempts)
		})
	})
	t.Run("Timeouts", func(t *testing.T) {
		p := build(t, standard.Config{Timeout: 9 * time.Second, AttemptTimeout: 2 * time.Second})
		stages := p.Stages()
		assert.Equal(t, 9*time.Second, stages[0].Timeout)
		assert.Equal(t, 2*time.Second, stages[len(stages)-1].Timeout)
		assert.Equal(t, 3*time.Second, build(t, standard.Config{Timeout: 6 * time.Second}).Stages()[4].Timeout,
			"half of a short Timeout")
	})
	t.Run("Names", func(t *testing.T) {
		p := build(t, standard.Config{Name: "payments", Retry: retry.Config{Name: "payments-retry"}})
		assert.Equal(t, "payments", p.Name())
		for _, s := range p.Stages() {
			want := "payments"
			if s.Kind == "retry" {
				want = "payments-retry"
			}
			assert.Equal(t, want, s.Name, s.Kind)
		}
		assert.Equal(t, "payments", p.Breaker.Name())
		assert.Equal(t, "payments", p.Budget.Name())
		assert.Equal(t, "payments", p.Estimator.Name())
	})
}

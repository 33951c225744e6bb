package simulation

import (
	"cmp"
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/budget"
	"github.com/resilience-go/pipeline/internal/hedgerule"
	"github.com/resilience-go/pipeline/latency"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/breaker"
	"github.com/resilience-go/pipeline/policy/hedge"
)

// copyPlan is one copy of a scripted attempt: how long it takes and how it ends.
type copyPlan struct {
	took time.Duration
	kind outcome.Kind
}

// hedgeCase is a hedging configuration, its estimator's warm-up (warm samples
// of warmWith, recorded at time 0), an optional breaker and budget, and the
// calls one process makes, call n at n x spacing, each making one attempt whose
// copy k follows calls[n][k] (the last plan repeats).
type hedgeCase struct {
	hedge    Hedge
	warm     int
	warmWith time.Duration
	breaker  *breaker.Config
	budget   *budget.Config
	spacing  time.Duration // a divisor of a second, so that the run's arrivals fall on it exactly
	calls    [][]copyPlan
}

func (c hedgeCase) plan(call, k int) copyPlan {
	plans := c.calls[call]
	return plans[min(k, len(plans)-1)]
}

func (c hedgeCase) quantile() float64 { return cmp.Or(c.hedge.Quantile, hedgerule.DefaultQuantile) }

// hedgeTrace is what the calls did: per call, when each copy was sent, which
// copy's result the attempt kept, its verdict and its duration (what the breaker
// records); the hedges sent, skipped and won; and, at the end, the estimator's
// sample count and quantile, the budget's tokens and the breaker's pressure.
type hedgeTrace struct {
	starts             [][]time.Duration
	kept               []int
	verdicts           []outcome.Kind
	took               []time.Duration
	sent, skipped, won int
	end                time.Duration
	samples            int
	quantile           time.Duration
	tokens, pressure   float64
	state              breaker.State
	normal             time.Duration // the breaker's measured normal latency, from the attempts' durations
}

func newHedgeTrace(calls int) hedgeTrace {
	return hedgeTrace{
		starts: make([][]time.Duration, calls), kept: make([]int, calls),
		verdicts: make([]outcome.Kind, calls), took: make([]time.Duration, calls),
	}
}

type callKey struct{}

// runHedgeStage runs the case through the real hedge stage, in a synctest
// bubble, as the card places it: breaker.Guard (if the case has a breaker) ->
// an observer of the attempt's result -> the hedge stage -> an inner stage that
// plays each copy's plan, sleeping its duration, or returning at once,
// cancelled, when its context ends.
func runHedgeStage(t *testing.T, c hedgeCase) hedgeTrace {
	tr := newHedgeTrace(len(c.calls))
	synctest.Test(t, func(t *testing.T) {
		begin := time.Now()
		est, err := latency.New(latency.Config{Window: c.hedge.Window})
		require.NoError(t, err)
		for range c.warm {
			est.Record(est.Now(), c.warmWith)
		}
		var bud *budget.Budget
		if c.budget != nil {
			bud, err = budget.New(*c.budget)
			require.NoError(t, err)
		}
		var brk *breaker.Breaker
		if c.breaker != nil {
			brk, err = breaker.New(*c.breaker)
			require.NoError(t, err)
		}
		cfg := c.hedge.stage()
		cfg.Estimator, cfg.Breaker, cfg.Budget = est, brk, bud
		h, err := hedge.New[int](cfg)
		require.NoError(t, err)

		var mu sync.Mutex
		play := pipeline.PolicyFunc[int](func(ctx context.Context, next pipeline.Next[int]) pipeline.Result[int] {
			n := ctx.Value(callKey{}).(int)
			mu.Lock()
			k := len(tr.starts[n])
			tr.starts[n] = append(tr.starts[n], time.Since(begin))
			mu.Unlock()
			p := c.plan(n, k)
			timer := time.NewTimer(p.took)
			defer timer.Stop()
			select {
			case <-timer.C:
				if p.kind == outcome.OK {
					return pipeline.Result[int]{Value: k}
				}
				return pipeline.Result[int]{Value: k, Err: errors.New("scripted failure"), Verdict: outcome.Verdict{Kind: p.kind}}
			case <-ctx.Done():
				return pipeline.Result[int]{Value: k, Err: ctx.Err(), Verdict: outcome.Verdict{Kind: outcome.Permanent, Canceled: true}}
			}
		})
		observe := pipeline.PolicyFunc[int](func(ctx context.Context, next pipeline.Next[int]) pipeline.Result[int] {
			from := time.Now()
			r := next.Run(ctx)
			n := ctx.Value(callKey{}).(int)
			mu.Lock()
			tr.kept[n], tr.verdicts[n], tr.took[n] = r.Value, r.Verdict.Kind, time.Since(from)
			if r.Value > 0 && hedgerule.Acceptable(r.Verdict) {
				tr.won++
			}
			mu.Unlock()
			return r
		})
		var stages []pipeline.Policy[int]
		if brk != nil {
			stages = append(stages, breaker.Guard[int](brk))
		}
		stages = append(stages, observe, h, play)
		p := pipeline.New(stages...).With(pipeline.Options[int]{OnEvent: func(_ context.Context, _ pipeline.Source, e pipeline.Event) {
			mu.Lock()
			defer mu.Unlock()
			switch e.(type) {
			case hedge.Hedged:
				tr.sent++
			case hedge.Skipped:
				tr.skipped++
			}
		}})

		var wg sync.WaitGroup
		for n := range c.calls {
			wg.Go(func() {
				time.Sleep(time.Duration(n) * c.spacing) // the call's offer time, on the bubble's clock
				ctx := context.WithValue(context.Background(), callKey{}, n)
				_, _ = p.Execute(ctx, func(context.Context) (int, error) { return 0, nil })
			})
		}
		wg.Wait()
		tr.end = time.Since(begin)
		tr.quantile, tr.samples = est.Quantile(est.Now(), c.quantile())
		tr.tokens = bud.Tokens()
		if brk != nil {
			tr.pressure, tr.state = brk.Pressure(), brk.State()
			tr.normal, _ = brk.NormalLatency()
		}
	})
	return tr
}

// scriptedCopies is a model that answers copy k of call n with the case's plan.
type scriptedCopies struct{ c hedgeCase }

func (m scriptedCopies) Start() (Dependency, error) { return m, nil }

func (m scriptedCopies) Respond(a Attempt) Response {
	p := m.c.plan(a.call, a.copy)
	return Response{Latency: p.took, Verdict: outcome.Verdict{Kind: p.kind}}
}

// runSimHedging runs the case through the simulation: one process with the
// case's hedge, breaker and budget and no retry, offering its calls every
// spacing from 0, against a model that plays the plans.
func runSimHedging(t *testing.T, c hedgeCase) hedgeTrace {
	tr := newHedgeTrace(len(c.calls))
	h := c.hedge
	s, err := newSim(Config{
		Duration:   time.Duration(len(c.calls)) * c.spacing,
		Rate:       float64(time.Second) / float64(c.spacing),
		Dependency: scriptedCopies{c},
		Client:     Client{Breaker: c.breaker, Budget: c.budget, Hedge: &h},
	})
	require.NoError(t, err)
	p := &s.procs[0]
	p.phase = 0
	for range c.warm {
		p.hedge.est.Record(0, c.warmWith)
	}
	s.onAttempt = func(n int, copies []attemptCopy, kept int, took time.Duration) {
		for _, a := range copies {
			tr.starts[n] = append(tr.starts[n], a.start)
		}
		tr.kept[n], tr.verdicts[n], tr.took[n] = kept, copies[kept].verdict.Kind, took
	}
	s.schedule()
	s.run()
	r := s.rec.report()
	require.Equal(t, r.Offered, len(c.calls))
	tr.sent, tr.skipped, tr.won = r.HedgesSent, r.HedgesSkipped, r.HedgesWon
	tr.end = s.Now
	tr.quantile, tr.samples = p.hedge.est.Quantile(p.hedge.est.Now(), c.quantile())
	tr.tokens = p.budget.Tokens()
	if p.breaker != nil {
		tr.pressure, tr.state = p.breaker.Pressure(), p.breaker.State()
		tr.normal, _ = p.breaker.NormalLatency()
	}
	return tr
}

// delayAfter is the hedge delay of the case's first call: its warmed
// estimator's quantile, or MinDelay.
func delayAfter(t *testing.T, c hedgeCase) time.Duration {
	est, err := latency.New(latency.Config{Window: c.hedge.Window})
	require.NoError(t, err)
	for range c.warm {
		est.Record(0, c.warmWith)
	}
	d, _ := est.Quantile(0, c.quantile())
	return max(d, cmp.Or(c.hedge.MinDelay, hedgerule.DefaultMinDelay))
}

func TestHedgeMatchesHedgeStage(t *testing.T) {
	ms := func(n float64) time.Duration { return time.Duration(n * float64(time.Millisecond)) }
	ok := func(took time.Duration) copyPlan { return copyPlan{took: took} }
	fail := func(took time.Duration) copyPlan { return copyPlan{took: took, kind: outcome.Transient} }
	// warm: 20 samples of 50 ms, so the delay d is about 50 ms.
	warm := func(c hedgeCase) hedgeCase {
		if c.warm == 0 && c.warmWith == 0 {
			c.warm, c.warmWith = hedgerule.DefaultMinSamples, ms(50)
		}
		if c.spacing == 0 {
			c.spacing = time.Second
		}
		return c
	}
	calm := &breaker.Config{ConsecutiveFailures: 2, BreakJitter: breaker.JitterNone}
	oneToken := &budget.Config{Capacity: 1, RefillPerSecond: 0.001}
	learn := hedgeCase{spacing: 100 * time.Millisecond, breaker: calm}
	for i := range 30 {
		learn.calls = append(learn.calls, []copyPlan{ok(ms(10 + float64(i*37%60) + 0.013*float64(i))), ok(ms(3.3))})
	}
	type want struct {
		copies []int // per call
		kept   []int // per call
	}
	cases := []struct {
		name string
		c    hedgeCase
		want want
	}{
		{"no hedge: the first copy is fast", hedgeCase{calls: [][]copyPlan{{ok(ms(10))}}}, want{[]int{1}, []int{0}}},
		{"not armed: too few samples", hedgeCase{warm: 19, warmWith: ms(50), calls: [][]copyPlan{{ok(ms(200)), ok(ms(7))}}}, want{[]int{1}, []int{0}}},
		{"MinDelay floors the delay", hedgeCase{warm: 20, warmWith: ms(1), calls: [][]copyPlan{{ok(ms(200)), ok(ms(7))}}}, want{[]int{2}, []int{1}}},
		{"the hedge wins", hedgeCase{calls: [][]copyPlan{{ok(ms(200)), ok(ms(7))}}}, want{[]int{2}, []int{1}}},
		{"the first copy wins after the hedge was sent", hedgeCase{calls: [][]copyPlan{{ok(ms(80)), ok(ms(100))}}}, want{[]int{2}, []int{0}}},
		{"both fail, the hedge last", hedgeCase{calls: [][]copyPlan{{fail(ms(70)), fail(ms(40))}}}, want{[]int{2}, []int{1}}},
		{"both fail, the first copy last", hedgeCase{calls: [][]copyPlan{{fail(ms(150)), fail(ms(3))}}}, want{[]int{2}, []int{0}}},
		{"the first copy fails fast: no hedge", hedgeCase{calls: [][]copyPlan{{fail(ms(5)), ok(ms(3))}}}, want{[]int{1}, []int{0}}},
		{"the first copy fails after the hedge was sent, which wins", hedgeCase{calls: [][]copyPlan{{fail(ms(70)), ok(ms(40))}}}, want{[]int{2}, []int{1}}},
		{"a permanent answer wins", hedgeCase{calls: [][]copyPlan{{ok(ms(200)), {took: ms(5), kind: outcome.Permanent}}}}, want{[]int{2}, []int{1}}},
		{"a throttled answer does not end the race", hedgeCase{calls: [][]copyPlan{{ok(ms(120)), {took: ms(5), kind: outcome.Throttled}}}}, want{[]int{2}, []int{0}}},
		{"the budget refuses the second call's hedge", hedgeCase{budget: oneToken, calls: [][]copyPlan{{ok(ms(200)), ok(ms(7))}, {ok(ms(200)), ok(ms(7))}}}, want{[]int{2, 1}, []int{1, 0}}},
		{"breaker pressure refuses when the attempt starts", hedgeCase{breaker: calm, spacing: 100 * time.Millisecond, calls: [][]copyPlan{{fail(ms(5))}, {ok(ms(200)), ok(ms(7))}}}, want{[]int{1, 1}, []int{0, 0}}},
		{"breaker pressure refuses when the hedge is due", hedgeCase{breaker: calm, spacing: 10 * time.Millisecond, calls: [][]copyPlan{{ok(ms(200)), ok(ms(7))}, {fail(ms(5))}}}, want{[]int{1, 1}, []int{0, 0}}},
		{"a calm breaker lets the hedge go", hedgeCase{breaker: calm, calls: [][]copyPlan{{ok(ms(200)), ok(ms(7))}}}, want{[]int{2}, []int{1}}},
		{"MaxAttempts 3", hedgeCase{hedge: Hedge{MaxAttempts: 3}, calls: [][]copyPlan{{ok(ms(300)), ok(ms(200)), ok(ms(7))}}}, want{[]int{3}, []int{2}}},
		{"MaxAttempts 3, the budget pays one hedge", hedgeCase{hedge: Hedge{MaxAttempts: 3}, budget: oneToken, calls: [][]copyPlan{{ok(ms(300)), ok(ms(200)), ok(ms(7))}}}, want{[]int{2}, []int{1}}},
		{"MaxAttempts 3, all fail", hedgeCase{hedge: Hedge{MaxAttempts: 3}, calls: [][]copyPlan{{fail(ms(300)), fail(ms(270)), fail(ms(100))}}}, want{[]int{3}, []int{1}}},
		{"MaxAttempts 3, the first fails while a hedge runs and a third is sent", hedgeCase{hedge: Hedge{MaxAttempts: 3}, calls: [][]copyPlan{{fail(ms(70)), ok(ms(200)), ok(ms(9))}}}, want{[]int{3}, []int{2}}},
		{"a median delay over a 10 s window", hedgeCase{hedge: Hedge{Quantile: 0.5, Window: 10 * time.Second, MinSamples: 5}, warm: 5, warmWith: ms(30), calls: [][]copyPlan{{ok(ms(45)), ok(ms(4))}}}, want{[]int{2}, []int{1}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := warm(tc.c)
			real, sim := runHedgeStage(t, c), runSimHedging(t, c)
			assert.Equal(t, real, sim)
			for n, copies := range tc.want.copies {
				assert.Len(t, real.starts[n], copies, "copies of call %d (delay %v)", n, delayAfter(t, c))
				assert.Equal(t, tc.want.kept[n], real.kept[n], "kept copy of call %d", n)
			}
		})
	}

	t.Run("the estimator learns, then hedges", func(t *testing.T) {
		c := learn
		real, sim := runHedgeStage(t, c), runSimHedging(t, c)
		assert.Equal(t, real, sim)
		assert.Positive(t, real.sent, "hedges once 20 samples were measured")
		assert.Positive(t, real.normal, "the breaker measured the attempts")
		for n := range hedgerule.DefaultMinSamples {
			assert.Len(t, real.starts[n], 1, "call %d came before the estimator held 20 samples", n)
		}
	})
}

func TestHedgeMatchesHedgeStageOnRandomScripts(t *testing.T) {
	gen := rand.New(rand.NewPCG(11, 11))
	spacings := []time.Duration{5 * time.Millisecond, 10 * time.Millisecond, 100 * time.Millisecond}
	kinds := []outcome.Kind{outcome.OK, outcome.OK, outcome.OK, outcome.Transient, outcome.Transient, outcome.Throttled, outcome.Permanent}
	// took draws a duration in [1 ms, 300 ms) to the nanosecond, so that no two
	// things happen at the same instant (which the real stage would race).
	took := func() time.Duration { return time.Millisecond + time.Duration(gen.Int64N(int64(299*time.Millisecond))) }
	var sent, skipped, won, multi int
	for i := range 300 {
		c := hedgeCase{
			hedge:    Hedge{Quantile: []float64{0, 0.5, 0.9}[gen.IntN(3)], MaxAttempts: 2 + gen.IntN(3), MinSamples: gen.IntN(25)},
			warm:     gen.IntN(30),
			warmWith: took() / 4,
			spacing:  spacings[gen.IntN(len(spacings))],
		}
		if gen.IntN(2) == 0 {
			c.hedge.MinDelay = time.Duration(1+gen.IntN(30)) * time.Millisecond
		}
		if gen.IntN(2) == 0 {
			c.breaker = &breaker.Config{ConsecutiveFailures: 2 + gen.IntN(4), BreakJitter: breaker.JitterNone}
		}
		if gen.IntN(2) == 0 {
			c.budget = &budget.Config{Capacity: float64(1 + gen.IntN(3)), RefillPerSecond: 0.5 + gen.Float64()}
		}
		for range 1 + gen.IntN(4) {
			var plans []copyPlan
			for range 1 + gen.IntN(4) {
				plans = append(plans, copyPlan{took: took(), kind: kinds[gen.IntN(len(kinds))]})
			}
			c.calls = append(c.calls, plans)
		}
		real, sim := runHedgeStage(t, c), runSimHedging(t, c)
		if !assert.Equal(t, real, sim, "case %d: %+v", i, c) {
			return
		}
		sent, skipped, won = sent+real.sent, skipped+real.skipped, won+real.won
		for _, s := range real.starts {
			if len(s) > 2 {
				multi++
			}
		}
	}
	// The scripts exercised hedges sent, skipped and won, and attempts of
	// more than two copies.
	assert.Positive(t, sent)
	assert.Positive(t, skipped)
	assert.Positive(t, won)
	assert.Positive(t, multi)
	t.Logf("hedges sent %d, skipped %d, won %d; attempts of 3 or more copies %d", sent, skipped, won, multi)
}

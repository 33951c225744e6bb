package simulation

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/budget"
	"github.com/resilience-go/pipeline/internal/discrete"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/retry"
)

// scripted is one attempt of a script: how it ends and how long it takes. A
// refused attempt is the breaker's refusal: it takes no time and never reaches
// the dependency.
type scripted struct {
	verdict outcome.Verdict
	refused bool
	took    time.Duration
}

// loopCase is a retry configuration and the attempts a call meets.
type loopCase struct {
	retry    Retry
	budget   *budget.Config // nil: unlimited
	deadline time.Duration  // 0: none
	seed     uint64
	script   []scripted // the last entry repeats
}

func (c loopCase) attempt(n int) scripted { return c.script[min(n, len(c.script))-1] }

// trace is what a call did: when each attempt (refused ones included) started,
// the backoffs waited, how it stopped and when it returned, and the tokens the
// budget held at the end.
type trace struct {
	starts   []time.Duration
	delays   []time.Duration
	served   bool
	reason   pipeline.Reason
	attempts int
	elapsed  time.Duration
	tokens   float64
}

// breakerRefusal is the result the breaker stage returns for a refused attempt.
func breakerRefusal(retryAfter time.Duration) pipeline.Result[int] {
	return pipeline.Result[int]{
		Err:     &pipeline.StopError{Stage: "breaker", Reason: pipeline.DependencyUnavailable, RetryAfter: retryAfter},
		Verdict: outcome.Verdict{Kind: outcome.Throttled, SelfImposed: true}.WithRetryAfter(retryAfter),
	}
}

// runRealStage runs the script through the real retry stage, in a synctest
// bubble: an inner stage plays each attempt, sleeping its duration (cut, as
// Transient, by the call's deadline).
func runRealStage(t *testing.T, c loopCase) trace {
	var tr trace
	synctest.Test(t, func(t *testing.T) {
		var b *budget.Budget
		if c.budget != nil {
			var err error
			b, err = budget.New(*c.budget) // real time: virtual in the bubble
			require.NoError(t, err)
		}
		var events []pipeline.Event
		stage, err := retry.New[int](retry.Config{
			MaxAttempts: c.retry.MaxAttempts, Backoff: c.retry.Backoff, RefusalPause: c.retry.RefusalPause,
			Budget: b, Rand: rand.NewPCG(c.seed, c.seed),
		})
		require.NoError(t, err)
		begin := time.Now()
		play := pipeline.PolicyFunc[int](func(ctx context.Context, next pipeline.Next[int]) pipeline.Result[int] {
			tr.starts = append(tr.starts, time.Since(begin))
			a := c.attempt(next.Attempt())
			if a.refused {
				return breakerRefusal(a.verdict.RetryAfter())
			}
			timer := time.NewTimer(a.took)
			defer timer.Stop()
			select {
			case <-timer.C:
				if a.verdict.Kind == outcome.OK {
					return pipeline.Result[int]{Value: 1}
				}
				return pipeline.Result[int]{Err: errors.New("scripted failure"), Verdict: a.verdict}
			case <-ctx.Done():
				return pipeline.Result[int]{Err: ctx.Err(), Verdict: outcome.Verdict{Kind: outcome.Transient}}
			}
		})
		ctx := context.Background()
		if c.deadline > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, c.deadline)
			defer cancel()
		}
		p := pipeline.New[int](stage, play).With(pipeline.Options[int]{OnEvent: func(_ context.Context, _ pipeline.Source, e pipeline.Event) { events = append(events, e) }})
		_, err = p.Execute(ctx, func(context.Context) (int, error) { return 0, nil })
		tr.elapsed = time.Since(begin)
		for _, e := range events {
			if s, ok := e.(retry.Scheduled); ok {
				tr.delays = append(tr.delays, s.Delay)
			}
		}
		if err == nil {
			tr.served, tr.attempts = true, len(tr.starts)
		} else {
			stop, ok := errors.AsType[*pipeline.StopError](err)
			require.True(t, ok, "error %v is not a stop error", err)
			tr.reason, tr.attempts = stop.Reason, stop.Attempts
		}
		tr.tokens = b.Tokens()
	})
	return tr
}

// runLoop runs the script through the simulation's retry loop on a fake clock,
// cutting attempts at the deadline as the simulation does.
func runLoop(t *testing.T, c loopCase) trace {
	var tr trace
	clock := clockwork.NewFakeClockAt(discrete.Epoch)
	var b *budget.Budget
	if c.budget != nil {
		bc := *c.budget
		bc.Clock = clock
		var err error
		b, err = budget.New(bc)
		require.NoError(t, err)
	}
	r := c.retry
	l := newLoop(&r, b, rand.NewPCG(c.seed, c.seed))
	var deadline time.Time
	if c.deadline > 0 {
		deadline = discrete.Epoch.Add(c.deadline)
	}
	for n := 1; ; n++ {
		tr.starts = append(tr.starts, clock.Since(discrete.Epoch))
		a := c.attempt(n)
		v := a.verdict
		if a.refused {
			v = breakerRefusal(a.verdict.RetryAfter()).Verdict
		} else {
			took := a.took
			if !deadline.IsZero() && took >= deadline.Sub(clock.Now()) {
				took, v = deadline.Sub(clock.Now()), outcome.Verdict{Kind: outcome.Transient}
			}
			clock.Advance(took)
		}
		st := l.after(n, v, clock.Now(), deadline)
		clock.Advance(st.wait)
		if st.served || st.reason != 0 {
			tr.served, tr.reason, tr.attempts = st.served, st.reason, st.attempts
			break
		}
		tr.delays = append(tr.delays, st.wait)
	}
	tr.elapsed = clock.Since(discrete.Epoch)
	tr.tokens = b.Tokens()
	return tr
}

func TestLoopMatchesRetryStage(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	fail := scripted{verdict: outcome.Verdict{Kind: outcome.Transient}, took: ms(10)}
	ok := scripted{took: ms(10)}
	refused := scripted{refused: true, verdict: outcome.Verdict{}.WithRetryAfter(ms(700))}
	tiny := &budget.Config{Capacity: 1, RefillPerSecond: 0.001}
	cases := []struct {
		name   string
		c      loopCase
		reason pipeline.Reason // 0: served
	}{
		{"OK at once", loopCase{script: []scripted{ok}}, 0},
		{"OK after two failures", loopCase{script: []scripted{fail, fail, ok}}, 0},
		{"attempts exhausted", loopCase{script: []scripted{fail}}, pipeline.AttemptsExhausted},
		{"permanent", loopCase{script: []scripted{fail, {verdict: outcome.Verdict{Kind: outcome.Permanent}, took: ms(5)}}}, pipeline.Permanent},
		{"refused first", loopCase{script: []scripted{refused}}, pipeline.DependencyUnavailable},
		{"refused retry is refunded", loopCase{budget: tiny, script: []scripted{fail, refused}}, pipeline.DependencyUnavailable},
		{"budget refuses", loopCase{budget: tiny, retry: Retry{MaxAttempts: 5}, script: []scripted{fail}}, pipeline.BudgetExhausted},
		{"backoff would pass the deadline", loopCase{deadline: ms(60), retry: Retry{Backoff: retry.Constant{Interval: ms(100), Jitter: retry.NoJitter}}, script: []scripted{fail}}, pipeline.Deadline},
		{"backoff ending exactly at the deadline", loopCase{deadline: ms(60), retry: Retry{Backoff: retry.Constant{Interval: ms(50), Jitter: retry.NoJitter}}, script: []scripted{fail}}, pipeline.Deadline},
		{"attempt cut by the deadline", loopCase{deadline: ms(50), script: []scripted{{took: ms(80)}}}, pipeline.Deadline},
		{"refusal pause bounded by the deadline", loopCase{deadline: ms(60), script: []scripted{fail, refused}, retry: Retry{Backoff: retry.Constant{Interval: ms(20), Jitter: retry.NoJitter}}}, pipeline.DependencyUnavailable},
		{"throttled hint", loopCase{script: []scripted{{verdict: outcome.Verdict{Kind: outcome.Throttled}.WithRetryAfter(ms(1500)), took: ms(3)}, ok}}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			real, sim := runRealStage(t, tc.c), runLoop(t, tc.c)
			assert.Equal(t, real, sim)
			if tc.reason == 0 {
				assert.True(t, real.served, "served")
			} else {
				assert.Equal(t, tc.reason, real.reason, "reason")
			}
		})
	}
}

func TestLoopMatchesRetryStageOnRandomScripts(t *testing.T) {
	gen := rand.New(rand.NewPCG(7, 7))
	backoffs := []retry.Backoff{
		nil,
		retry.Exponential{Jitter: retry.EqualJitter, Base: 40 * time.Millisecond},
		retry.Constant{Interval: 30 * time.Millisecond},
		retry.Exponential{Jitter: retry.NoJitter, Factor: 3},
	}
	reasons := map[pipeline.Reason]int{}
	served := 0
	for i := range 400 {
		c := loopCase{
			seed:  gen.Uint64(),
			retry: Retry{MaxAttempts: 1 + gen.IntN(5), Backoff: backoffs[gen.IntN(len(backoffs))]},
		}
		if gen.IntN(2) == 0 {
			c.retry.RefusalPause = time.Duration(1+gen.IntN(200)) * time.Millisecond
		}
		if gen.IntN(2) == 0 {
			c.budget = &budget.Config{Capacity: float64(1 + gen.IntN(3)), RefillPerSecond: 0.5 + gen.Float64()}
		}
		if gen.IntN(2) == 0 {
			c.deadline = time.Duration(100+gen.IntN(2000)) * time.Millisecond
		}
		for range 1 + gen.IntN(6) {
			a := scripted{took: time.Duration(1+gen.IntN(400)) * time.Millisecond}
			switch k := gen.IntN(10); {
			case k < 5:
				a.verdict.Kind = outcome.Transient
			case k < 6:
				a.verdict.Kind = outcome.Throttled
			case k < 7:
				a.verdict = outcome.Verdict{Kind: outcome.Throttled}.WithRetryAfter(time.Duration(1+gen.IntN(900)) * time.Millisecond)
			case k < 8:
				a.verdict.Kind = outcome.Permanent
			case k < 9:
				a.refused, a.verdict = true, outcome.Verdict{}.WithRetryAfter(time.Duration(gen.IntN(5000))*time.Millisecond)
			}
			c.script = append(c.script, a)
		}
		real, sim := runRealStage(t, c), runLoop(t, c)
		if !assert.Equal(t, real, sim, "case %d: %+v", i, c) {
			return
		}
		if real.served {
			served++
		} else {
			reasons[real.reason]++
		}
	}
	// Every rule was exercised.
	for _, r := range []pipeline.Reason{pipeline.AttemptsExhausted, pipeline.Permanent, pipeline.DependencyUnavailable, pipeline.BudgetExhausted, pipeline.Deadline} {
		assert.Positive(t, reasons[r], "no case stopped with %v", r)
	}
	assert.Positive(t, served)
	t.Log("served", served, "stops", fmt.Sprint(reasons))
}

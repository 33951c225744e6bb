package breaker_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	conf "github.com/resilience-go/pipeline/internal/breakerconf"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/breaker"
)

var errBoom = errors.New("boom")

// retryish is a minimal retry stage: up to n attempts while the verdict is retryable.
func retryish[T any](n int) pipeline.PolicyFunc[T] {
	return func(ctx context.Context, next pipeline.Next[T]) pipeline.Result[T] {
		var r pipeline.Result[T]
		for a := 1; a <= n; a++ {
			r = next.WithAttempt(a).Run(ctx)
			if !r.Verdict.Retryable() {
				return r
			}
		}
		return r
	}
}

func TestGuardPassesSuccess(t *testing.T) {
	r := newRig(t, breaker.Config{})
	v, err := pipeline.New(breaker.Guard[int](r.b)).Execute(context.Background(), func(context.Context) (int, error) {
		return 42, nil
	})
	require.NoError(t, err)
	assert.Equal(t, 42, v)
}

func TestRetryThenBreakerTripRefusesNextAttempt(t *testing.T) {
	r := newRig(t, breaker.Config{ConsecutiveFailures: 1, BreakJitter: breaker.JitterNone})
	var stops []*pipeline.StopError
	p := pipeline.New(retryish[string](3), breaker.Guard[string](r.b)).With(pipeline.Options[string]{
		OnEvent: func(_ context.Context, _ pipeline.Source, e pipeline.Event) {
			if s, isStop := e.(pipeline.Stopped); isStop {
				stops = append(stops, s.Err)
			}
		},
	})
	calls := 0
	_, err := p.Execute(context.Background(), func(context.Context) (string, error) {
		calls++
		return "", errBoom
	})
	assert.Equal(t, 1, calls, "attempt 2 is refused without calling fn")
	se, isStop := errors.AsType[*pipeline.StopError](err)
	require.True(t, isStop, "got %v", err)
	assert.Equal(t, pipeline.DependencyUnavailable, se.Reason)
	assert.Equal(t, "breaker", se.Stage)
	assert.Equal(t, 15*time.Second, se.RetryAfter)
	assert.ErrorIs(t, err, pipeline.DependencyUnavailable)
	require.Len(t, stops, 1)
	assert.Same(t, se, stops[0])
}

func TestGuardRefusalResult(t *testing.T) {
	r := newRig(t, breaker.Config{ConsecutiveFailures: 1, BreakJitter: breaker.JitterNone})
	runFail(r)
	r.clock.Advance(5 * time.Second)
	called := false
	res := breaker.Guard[int](r.b).Execute(context.Background(), nextOf(func(context.Context) (int, error) {
		called = true
		return 0, nil
	}))
	assert.False(t, called)
	assert.Equal(t, outcome.Verdict{Kind: outcome.Throttled, SelfImposed: true}.WithRetryAfter(10*time.Second), res.Verdict)
	se, isStop := errors.AsType[*pipeline.StopError](res.Err)
	require.True(t, isStop)
	assert.Equal(t, 10*time.Second, se.RetryAfter)
	assert.False(t, res.Verdict.Failure(), "our own refusal is not evidence")
	assert.False(t, res.Verdict.Retryable())
}

// nextOf returns the Next a one-stage pipeline hands its stage.
func nextOf[T any](fn pipeline.Func[T]) pipeline.Next[T] {
	var next pipeline.Next[T]
	capture := pipeline.PolicyFunc[T](func(ctx context.Context, n pipeline.Next[T]) pipeline.Result[T] {
		next = n
		return pipeline.Result[T]{}
	})
	_, _ = pipeline.New[T](capture).Execute(context.Background(), fn)
	return next
}

func TestGuardMeasuresOnTheBreakerClock(t *testing.T) {
	r := newRig(t, breaker.Config{SlowCallThreshold: time.Second, BreakJitter: breaker.JitterNone})
	for range 5 {
		runFail(r)
	}
	r.clock.Advance(15 * time.Second)
	for range conf.DefaultProbeSlowLead { // slow probes, a lead of ProbeSlowLead
		_, err := pipeline.New(breaker.Guard[int](r.b)).Execute(context.Background(), func(context.Context) (int, error) {
			r.clock.Advance(2 * time.Second) // the probe answers, slowly
			return 1, nil
		})
		require.NoError(t, err)
	}
	assert.Equal(t, breaker.Open, r.state(), "slow probes are not a recovery")
	tr := r.events[len(r.events)-1].(breaker.Transition)
	assert.Equal(t, breaker.CauseProbeSlow, tr.Cause)
}

func TestPanickingProbeCountsAsFailureAndFreesSlot(t *testing.T) {
	r := newRig(t, breaker.Config{ConsecutiveFailures: 1, BreakJitter: breaker.JitterNone})
	runFail(r)
	r.clock.Advance(15 * time.Second)
	p := pipeline.New(breaker.Guard[int](r.b))
	func() {
		defer func() {
			v := recover()
			assert.Equal(t, "probe exploded", v, "the panic reaches the caller unchanged")
		}()
		_, _ = p.Execute(context.Background(), func(context.Context) (int, error) { panic("probe exploded") })
		t.Error("Execute returned instead of panicking")
	}()
	s := r.b.Snapshot()
	assert.Equal(t, breaker.Open, s.State, "the panic re-opened the breaker")
	assert.Equal(t, 2, s.Trips)
	assert.Equal(t, 30*time.Second, s.Break)
	assert.Equal(t, 0, s.Probes, "the slot is free")
	r.clock.Advance(30 * time.Second)
	_, err := p.Execute(context.Background(), func(context.Context) (int, error) { return 1, nil })
	assert.NoError(t, err, "a new probe is admitted")
}

func TestGuardNilPanics(t *testing.T) {
	assert.PanicsWithValue(t, "breaker: Guard: breaker is nil (did you ignore the error from breaker.New?)", func() {
		breaker.Guard[int](nil)
	})
}

func TestOneBreakerManyResultTypes(t *testing.T) {
	r := newRig(t, breaker.Config{ConsecutiveFailures: 2})
	ints := pipeline.New(breaker.Guard[int](r.b))
	strs := pipeline.New(breaker.Guard[string](r.b))
	_, _ = ints.Execute(context.Background(), func(context.Context) (int, error) { return 0, errBoom })
	_, _ = strs.Execute(context.Background(), func(context.Context) (string, error) { return "", errBoom })
	assert.Equal(t, breaker.Open, r.state())
	_, err := ints.Execute(context.Background(), func(context.Context) (int, error) { return 1, nil })
	assert.ErrorIs(t, err, pipeline.DependencyUnavailable)
}

// TestPanickingHookOnProbeSuccessRecordsOnce: the probe succeeds and closes the
// breaker, and the hook panics on that transition. The ticket was recorded
// before the hook ran; the stage's unwinding path must not record it again (as a
// failure, which with ConsecutiveFailures 1 would re-open the breaker).
func TestPanickingHookOnProbeSuccessRecordsOnce(t *testing.T) {
	clock := clockwork.NewFakeClockAt(epoch)
	b, err := breaker.New(breaker.Config{
		ConsecutiveFailures: 1,
		ProbeSuccesses:      1,
		BreakJitter:         breaker.JitterNone,
		Clock:               clock,
		OnEvent:             panicOnTransitionTo(breaker.Closed),
	})
	require.NoError(t, err)
	p := pipeline.New(breaker.Guard[int](b))
	_, err = p.Execute(context.Background(), func(context.Context) (int, error) { return 0, errBoom })
	require.ErrorIs(t, err, errBoom)
	require.Equal(t, breaker.Open, b.State())
	clock.Advance(15 * time.Second)
	assert.PanicsWithValue(t, "hook", func() {
		_, _ = p.Execute(context.Background(), func(context.Context) (int, error) { return 1, nil })
	})
	s := b.Snapshot()
	assert.Equal(t, breaker.Closed, s.State, "the successful probe closed the breaker; nothing re-opened it")
	assert.Equal(t, 0, s.ConsecutiveFailures)
	assert.Equal(t, 0, s.Trips)
}

// panicOnTransitionTo is a breaker hook that panics with "hook" on every
// transition to state to.
func panicOnTransitionTo(to breaker.State) func(context.Context, pipeline.Source, pipeline.Event) {
	return func(_ context.Context, _ pipeline.Source, e pipeline.Event) {
		if tr, isTr := e.(breaker.Transition); isTr && tr.To == to {
			panic("hook")
		}
	}
}

// TestPanickingHookDuringAdmitFreesProbeSlot: the hook panics on the
// Open -> HalfOpen transition that an admission raised. The admission never
// reached its caller, so its probe slot must be free at once, not held for a
// nominal break.
func TestPanickingHookDuringAdmitFreesProbeSlot(t *testing.T) {
	for _, via := range []string{"Admit", "Guard"} {
		t.Run(via, func(t *testing.T) {
			clock := clockwork.NewFakeClockAt(epoch)
			b, err := breaker.New(breaker.Config{
				ConsecutiveFailures: 1,
				BreakJitter:         breaker.JitterNone,
				Clock:               clock,
				OnEvent:             panicOnTransitionTo(breaker.HalfOpen),
			})
			require.NoError(t, err)
			tk, err := b.Admit()
			require.NoError(t, err)
			b.Done(tk, fail)
			clock.Advance(15 * time.Second)
			called := false
			assert.PanicsWithValue(t, "hook", func() {
				if via == "Admit" {
					_, _ = b.Admit()
					return
				}
				_, _ = pipeline.New(breaker.Guard[int](b)).Execute(context.Background(), func(context.Context) (int, error) {
					called = true
					return 1, nil
				})
			})
			assert.False(t, called, "the attempt whose admission panicked never ran")
			s := b.Snapshot()
			assert.Equal(t, breaker.HalfOpen, s.State)
			assert.Equal(t, 0, s.Probes, "the panicked admission's slot is free")
			tk, err = b.Admit()
			require.NoError(t, err, "another probe is admitted at once")
			assert.True(t, tk.Probe())
		})
	}
}

// TestARefusalAllocatesNothing: an open breaker under load must be cheaper than
// a healthy dependency, so the stage's refusals share their error.
func TestARefusalAllocatesNothing(t *testing.T) {
	clock := clockwork.NewFakeClock()
	b, err := breaker.New(breaker.Config{ConsecutiveFailures: 1, Clock: clock})
	require.NoError(t, err)
	tk, err := b.Admit()
	require.NoError(t, err)
	b.Done(tk, outcome.Verdict{Kind: outcome.Transient})
	p := pipeline.New[int](breaker.Guard[int](b))
	fn := func(context.Context) (int, error) { return 1, nil }
	ctx := context.Background()
	_, first := p.Execute(ctx, fn)
	require.ErrorIs(t, first, pipeline.DependencyUnavailable)
	assert.Zero(t, testing.AllocsPerRun(100, func() { _, _ = p.Execute(ctx, fn) }))
	_, again := p.Execute(ctx, fn)
	assert.Same(t, first, again, "the refusals of one millisecond share their error")
	clock.Advance(time.Millisecond)
	_, later := p.Execute(ctx, fn)
	assert.NotSame(t, first, later, "a refusal a millisecond later tells its own hint")
	assert.Equal(t, first.(*pipeline.StopError).RetryAfter-time.Millisecond, later.(*pipeline.StopError).RetryAfter)
}

// TestAnOpenBreakerWithoutAHookRefusesWithoutItsLock: the lock-free refusal of
// a breaker nobody observes must agree with the locked one at every change of
// state: the break's end, Reset, Isolate.
func TestAnOpenBreakerWithoutAHookRefusesWithoutItsLock(t *testing.T) {
	clock := clockwork.NewFakeClock()
	b, err := breaker.New(breaker.Config{ConsecutiveFailures: 1, BreakJitter: breaker.JitterNone, Clock: clock})
	require.NoError(t, err)
	trip := func() {
		tk, err := b.Admit()
		require.NoError(t, err)
		b.Done(tk, outcome.Verdict{Kind: outcome.Transient})
	}
	hint := func() (time.Duration, bool) {
		tk, err := b.Admit()
		if err == nil {
			b.Done(tk, outcome.Verdict{})
			return 0, true
		}
		return err.(*pipeline.StopError).RetryAfter, false
	}
	trip()
	d, admitted := hint()
	require.False(t, admitted)
	assert.Equal(t, conf.DefaultBreakDuration, d)
	clock.Advance(conf.DefaultBreakDuration - time.Second)
	d, _ = hint()
	assert.Equal(t, time.Second, d)
	clock.Advance(time.Second)
	_, admitted = hint()
	assert.True(t, admitted, "the break is over: a probe")

	trip() // a failing probe opens it again
	b.Reset()
	_, admitted = hint()
	assert.True(t, admitted, "Reset closes it at once")

	trip()
	b.Isolate()
	d, admitted = hint()
	assert.False(t, admitted)
	assert.Zero(t, d, "isolated: no hint")
	clock.Advance(time.Hour)
	_, admitted = hint()
	assert.False(t, admitted, "isolation outlasts any break")
}

// TestAnUntimedGuardRecordsVerdictsOnly runs quick attempts through
// GuardUntimed and 50 ms ones through Guard, on one breaker: the normal
// latency is the timed attempts' alone, and an untimed attempt, however
// long, is never slow. Its failures still count.
func TestAnUntimedGuardRecordsVerdictsOnly(t *testing.T) {
	r := newRig(t, breaker.Config{BreakJitter: breaker.JitterNone, MinimumCalls: 4, ConsecutiveFailures: 3})
	timed := pipeline.New(breaker.Guard[int](r.b))
	opening := pipeline.New(breaker.GuardUntimed[int](r.b))
	take := func(d time.Duration, err error) pipeline.Func[int] {
		return func(context.Context) (int, error) {
			r.clock.Advance(d)
			return 1, err
		}
	}
	ctx := context.Background()
	for range 40 {
		_, err := opening.Execute(ctx, take(0, nil))
		require.NoError(t, err)
	}
	for range 20 {
		_, err := timed.Execute(ctx, take(50*time.Millisecond, nil))
		require.NoError(t, err)
	}
	assert.InEpsilon(t, float64(50*time.Millisecond), float64(r.normalLatency()), 0.01, "the openings are not samples of latency")
	for range 10 {
		_, err := opening.Execute(ctx, take(time.Second, nil))
		require.NoError(t, err)
	}
	assert.Equal(t, breaker.Closed, r.state(), "a long opening is not slow")
	for range 3 {
		_, _ = opening.Execute(ctx, take(0, errBoom))
	}
	assert.Equal(t, breaker.Open, r.state(), "its failures count")
	assert.Equal(t, breaker.CauseConsecutiveFailures, r.lastTrip())
}

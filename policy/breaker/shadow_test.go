package breaker_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/criticality"
	conf "github.com/resilience-go/pipeline/internal/breakerconf"
	"github.com/resilience-go/pipeline/internal/hedgerule"
	"github.com/resilience-go/pipeline/latency"
	"github.com/resilience-go/pipeline/policy/breaker"
	"github.com/resilience-go/pipeline/policy/hedge"
)

// TestSetShadowAtRunTime switches a breaker in and out of shadow mode: the mode
// decides each admission as it comes, the events say which mode raised them,
// and an attempt admitted only by shadow mode stays without effect after the
// mode ends.
func TestSetShadowAtRunTime(t *testing.T) {
	r := newRig(t, breaker.Config{ConsecutiveFailures: 1, BreakDuration: 10 * time.Second, BreakJitter: breaker.JitterNone})
	require.False(t, r.b.Shadow())
	r.run(fail, time.Millisecond)
	require.Equal(t, breaker.Open, r.state())
	hint := r.refused()

	r.b.SetShadow(true)
	assert.True(t, r.b.Shadow())
	assert.True(t, r.b.Snapshot().Shadow)
	r.events = nil
	before := r.b.Snapshot()
	tk, err := r.b.Admit()
	require.NoError(t, err, "a breaker in shadow mode refused")
	require.True(t, tk.Shadow())
	assert.False(t, tk.Probe())
	assert.Equal(t, []pipeline.Event{breaker.Rejection{State: breaker.Open, RetryAfter: hint, At: epoch.Add(time.Millisecond), Shadow: true}}, r.events)
	held := tk // kept for after the mode ends
	r.b.Record(tk, ok, time.Millisecond)
	r.b.Done(tk, fail)
	assert.Equal(t, before, r.b.Snapshot(), "the outcome of a shadow ticket changed the breaker")

	// The break ends: the shadow breaker probes, as a real one would.
	r.clock.Advance(10 * time.Second)
	probe, err := r.b.Admit()
	require.NoError(t, err)
	require.True(t, probe.Probe())
	require.False(t, probe.Shadow())
	busy, err := r.b.Admit() // the one probe slot is taken
	require.NoError(t, err)
	require.True(t, busy.Shadow())
	last := r.events[len(r.events)-1]
	assert.Equal(t, breaker.Rejection{State: breaker.HalfOpen, At: r.clock.Now(), Shadow: true}, last)
	assert.Contains(t, r.events, pipeline.Event(breaker.Transition{
		From: breaker.Open, To: breaker.HalfOpen, Cause: breaker.CauseBreakElapsed, At: r.clock.Now(), Shadow: true,
	}))

	// Out of shadow mode: the same half-open breaker, now refusing for real.
	r.b.SetShadow(false)
	assert.False(t, r.b.Snapshot().Shadow)
	assert.Equal(t, time.Duration(0), r.refused())
	r.b.Record(probe, ok, time.Millisecond)
	r.run(ok, time.Millisecond) // the second probe success closes it
	require.Equal(t, breaker.Closed, r.state())
	tr := r.events[len(r.events)-1].(breaker.Transition)
	assert.Equal(t, breaker.Closed, tr.To)
	assert.False(t, tr.Shadow)

	// Shadow tickets from before stay ignored: one failure would trip it.
	r.b.Done(held, fail)
	r.b.Record(busy, fail, time.Millisecond)
	assert.Equal(t, breaker.Closed, r.state())
	assert.Zero(t, r.b.Snapshot().ConsecutiveFailures)
}

// TestShadowLockFreePath: a breaker without a hook refuses during a break
// without taking its lock; in shadow mode it admits instead, and a switch out
// of shadow mode during the break makes the next attempt refused at once.
func TestShadowLockFreePath(t *testing.T) {
	clock := clockwork.NewFakeClockAt(epoch)
	b, err := breaker.New(breaker.Config{ConsecutiveFailures: 1, BreakJitter: breaker.JitterNone, Clock: clock, Shadow: true})
	require.NoError(t, err)
	require.True(t, b.Shadow())
	tk, err := b.Admit()
	require.NoError(t, err)
	b.Done(tk, fail)
	require.Equal(t, breaker.Open, b.State())
	for range 3 {
		tk, err := b.Admit()
		require.NoError(t, err)
		assert.True(t, tk.Shadow())
		b.Done(tk, ok)
	}
	require.Equal(t, breaker.Open, b.State())
	b.SetShadow(false)
	_, err = b.Admit()
	assert.Equal(t, conf.DefaultBreakDuration, refusalHint(t, err))
	b.SetShadow(true)
	_, err = b.Admit()
	assert.NoError(t, err)
}

// TestShadowGuardNeverRefuses runs a pipeline guarded by a shadow breaker
// against a dependency that always fails: every call reaches it, through the
// trip, the breaks, the failed probes and Isolate, while the breaker's events
// tell what a real breaker would have refused. Out of shadow mode the same
// breaker refuses at once.
func TestShadowGuardNeverRefuses(t *testing.T) {
	r := newRig(t, breaker.Config{ConsecutiveFailures: 2, BreakJitter: breaker.JitterNone, Shadow: true})
	p := pipeline.New[int](breaker.Guard[int](r.b))
	down := errors.New("connection refused")
	var calls atomic.Int32
	call := func(context.Context) (int, error) {
		calls.Add(1)
		r.clock.Advance(time.Millisecond)
		return 0, down
	}
	for i := range 100 {
		if i == 60 {
			r.b.Isolate()
		}
		_, err := p.Execute(t.Context(), call)
		require.ErrorIs(t, err, down, "call %d did not reach the dependency", i)
		r.clock.Advance(time.Second)
	}
	assert.EqualValues(t, 100, calls.Load())
	var rejections int
	for _, e := range r.events {
		switch e := e.(type) {
		case breaker.Rejection:
			rejections++
			assert.True(t, e.Shadow)
		case breaker.Transition:
			assert.True(t, e.Shadow)
		}
	}
	assert.Greater(t, rejections, 50, "a breaker isolated for 40 calls and broken for most of the rest")
	assert.Contains(t, r.transitions(), "closed->open")
	assert.Contains(t, r.transitions(), "half-open->open")
	assert.Equal(t, breaker.Isolated, r.state())

	r.b.SetShadow(false)
	_, err := p.Execute(t.Context(), call)
	assert.Equal(t, time.Duration(0), refusalHint(t, err))
	assert.EqualValues(t, 100, calls.Load())
}

// TestHedgeIgnoresAShadowBreaker: a hedge stage skips its hedge while its
// breaker is under pressure, but a shadow breaker must not change what the
// pipeline does, so under the same pressure the stage hedges. Pressure itself
// stays truthful.
func TestHedgeIgnoresAShadowBreaker(t *testing.T) {
	for _, shadow := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			br, err := breaker.New(breaker.Config{ConsecutiveFailures: 1, Shadow: shadow})
			require.NoError(t, err)
			tk, err := br.Admit()
			require.NoError(t, err)
			br.Done(tk, fail)
			require.Equal(t, breaker.Open, br.State())
			require.Equal(t, 1.0, br.Pressure())

			est, err := latency.New(latency.Config{})
			require.NoError(t, err)
			for range hedgerule.DefaultMinSamples {
				est.Record(est.Now(), time.Millisecond)
			}
			h, err := hedge.New[string](hedge.Config{Estimator: est, Breaker: br, Repeatable: true, MaxExtra: 1})
			require.NoError(t, err)
			rule := hedgerule.New(hedgerule.Settings{Estimator: est, Breaker: br, MaxExtra: 1}) // the stage's decisions
			_, armed := rule.Delay(est.Now())
			assert.Equal(t, shadow, armed, "Delay armed")
			if shadow {
				assert.Empty(t, rule.Permit(criticality.Default), "Permit")
			} else {
				assert.Equal(t, "breaker", rule.Permit(criticality.Default), "Permit")
			}

			var copies atomic.Int32
			work := func(ctx context.Context) (string, error) {
				if copies.Add(1) > 1 {
					return "hedge", nil
				}
				select { // the first copy hangs past the hedge delay
				case <-time.After(time.Second):
					return "first", nil
				case <-ctx.Done():
					return "", ctx.Err()
				}
			}
			v, err := pipeline.New[string](h).Execute(t.Context(), work)
			require.NoError(t, err)
			if shadow {
				assert.Equal(t, "hedge", v, "a shadow breaker under pressure held the hedge back")
			} else {
				assert.Equal(t, "first", v, "a real breaker under pressure let a hedge through")
			}
		})
	}
}

// TestShadowHammer switches the mode while goroutines drive the breaker through
// trips, breaks and probes, and another moves its clock on; then, with shadow
// mode left on, not one attempt is refused. Run it with -race.
func TestShadowHammer(t *testing.T) {
	clock := clockwork.NewFakeClockAt(epoch)
	var rejections, shadowRejections atomic.Int64
	b, err := breaker.New(breaker.Config{
		ConsecutiveFailures: 2,
		BreakDuration:       time.Millisecond,
		Clock:               clock,
		OnEvent: func(_ context.Context, _ pipeline.Source, e pipeline.Event) {
			if r, isRejection := e.(breaker.Rejection); isRejection {
				rejections.Add(1)
				if r.Shadow {
					shadowRejections.Add(1)
				}
			}
		},
	})
	require.NoError(t, err)
	// drive runs n attempts on each of 4 goroutines, two failures in three,
	// while another goroutine moves the clock on (and switches the mode, if
	// toggle) until they are done; it returns the refusals.
	drive := func(n int, toggle bool) int64 {
		var refused atomic.Int64
		stop := make(chan struct{})
		var background sync.WaitGroup
		background.Go(func() {
			for on := true; ; on = !on {
				select {
				case <-stop:
					return
				default:
				}
				clock.Advance(100 * time.Microsecond)
				if toggle {
					b.SetShadow(on)
				}
			}
		})
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Go(func() {
				for i := range n {
					tk, err := b.Admit()
					if err != nil {
						refused.Add(1)
						continue
					}
					v := fail
					if (i+g)%3 == 0 {
						v = ok
					}
					b.Done(tk, v)
				}
			})
		}
		wg.Wait()
		close(stop)
		background.Wait()
		return refused.Load()
	}
	drive(2000, true)

	b.SetShadow(true)
	before := shadowRejections.Load()
	assert.Zero(t, drive(2000, false), "refusals in shadow mode")
	assert.Positive(t, shadowRejections.Load()-before, "no would-be refusal: the breaker never opened")
	t.Logf("%d rejections, %d of them in shadow mode", rejections.Load(), shadowRejections.Load())
}

// TestShadowTicketIsNotAProbe: the Ticket of an attempt admitted only by shadow
// mode stays two words and is neither a probe nor the zero Ticket.
func TestShadowTicketIsNotAProbe(t *testing.T) {
	r := newRig(t, breaker.Config{Shadow: true})
	r.b.Isolate()
	tk, err := r.b.Admit()
	require.NoError(t, err)
	assert.True(t, tk.Shadow())
	assert.False(t, tk.Probe())
	assert.NotEqual(t, breaker.Ticket{}, tk)
	assert.False(t, breaker.Ticket{}.Shadow())
}

// TestShadowAdmissionAllocatesNothing: through the stage, an attempt that only
// shadow mode admits allocates nothing, as a refusal does not.
func TestShadowAdmissionAllocatesNothing(t *testing.T) {
	b, err := breaker.New(breaker.Config{Shadow: true})
	require.NoError(t, err)
	b.Isolate()
	p := pipeline.New[int](breaker.Guard[int](b))
	fn := func(context.Context) (int, error) { return 1, nil }
	ctx := context.Background()
	assert.Zero(t, testing.AllocsPerRun(100, func() {
		if _, err := p.Execute(ctx, fn); err != nil {
			t.Fatal(err)
		}
	}))
}

package breaker_test

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	conf "github.com/resilience-go/pipeline/internal/breakerconf"
	"github.com/resilience-go/pipeline/policy/breaker"
)

// TestIsolateForRefusesForExactlyD: a closed breaker forced open for 7 s
// refuses with the rest of those 7 s as its hint, with no jitter, up to the
// last nanosecond, then half-opens and probes like after any break. It was no
// trip: the probes close it, and a trip after that breaks for BreakDuration.
func TestIsolateForRefusesForExactlyD(t *testing.T) {
	const d = 7 * time.Second
	r := newRig(t, breaker.Config{ConsecutiveFailures: 1}) // equal jitter: IsolateFor must not use it
	r.b.IsolateFor(d)
	require.Equal(t, breaker.Open, r.state())
	assert.Equal(t, []pipeline.Event{
		breaker.Transition{From: breaker.Closed, To: breaker.Open, Cause: breaker.CauseForced, Break: d, At: epoch},
	}, r.events)
	s := r.b.Snapshot()
	assert.Equal(t, 0, s.Trips)
	assert.Equal(t, time.Duration(0), s.Nominal)
	assert.Equal(t, d, s.Break)
	assert.Equal(t, epoch.Add(d), s.BreakEnds)
	assert.Equal(t, 1.0, r.b.Pressure())

	assert.Equal(t, d, r.refused())
	r.clock.Advance(d - time.Nanosecond)
	assert.Equal(t, breaker.Open, r.state())
	assert.Equal(t, time.Nanosecond, r.refused())
	assert.Equal(t, breaker.Rejection{State: breaker.Open, RetryAfter: time.Nanosecond, At: r.clock.Now()}, r.events[len(r.events)-1])

	r.clock.Advance(time.Nanosecond)
	assert.Equal(t, breaker.HalfOpen, r.state())
	probe := r.admit()
	require.True(t, r.ticket[probe].Probe())
	r.b.Record(r.ticket[probe], ok, time.Millisecond)
	runOK(r)
	require.Equal(t, breaker.Closed, r.state())
	assert.Equal(t, []string{"closed->open", "open->half-open", "half-open->closed"}, r.transitions())

	runFail(r)
	s = r.b.Snapshot()
	assert.Equal(t, 1, s.Trips, "the first trip")
	assert.Equal(t, conf.DefaultBreakDuration, s.Nominal)
}

// TestIsolateForKeepsTheBreakGrowth: a forced break between two trips leaves
// their growth alone. The first trip breaks for 1 s; IsolateFor replaces that
// break with 50 ms; the probe after it fails, which is the second trip: 2 s.
func TestIsolateForKeepsTheBreakGrowth(t *testing.T) {
	r := newRig(t, breaker.Config{ConsecutiveFailures: 1, BreakDuration: time.Second, BreakJitter: breaker.JitterNone})
	runFail(r)
	require.Equal(t, 1, r.b.Snapshot().Trips)
	r.b.IsolateFor(50 * time.Millisecond)
	s := r.b.Snapshot()
	assert.Equal(t, 1, s.Trips)
	assert.Equal(t, time.Second, s.Nominal)
	assert.Equal(t, 50*time.Millisecond, s.Break)
	tr := r.events[len(r.events)-1].(breaker.Transition)
	assert.Equal(t, breaker.Transition{From: breaker.Open, To: breaker.Open, Cause: breaker.CauseForced,
		Break: 50 * time.Millisecond, At: r.clock.Now()}, tr, "a forced break replaces the break being served")

	r.clock.Advance(50 * time.Millisecond)
	require.Equal(t, breaker.HalfOpen, r.state())
	runFail(r)
	s = r.b.Snapshot()
	assert.Equal(t, 2, s.Trips)
	assert.Equal(t, 2*time.Second, s.Nominal)
	assert.Equal(t, 2*time.Second, s.Break)
	assert.Equal(t, breaker.CauseProbeFailed, r.events[len(r.events)-1].(breaker.Transition).Cause)
}

// TestIsolateForLengthensABreak: a forced break may be longer than the break
// it replaces, and is served to its end.
func TestIsolateForLengthensABreak(t *testing.T) {
	r := newRig(t, breaker.Config{ConsecutiveFailures: 1, BreakJitter: breaker.JitterNone})
	runFail(r)
	r.b.IsolateFor(time.Hour)
	r.clock.Advance(59 * time.Minute)
	assert.Equal(t, time.Minute, r.refused())
	r.clock.Advance(time.Minute)
	assert.Equal(t, breaker.HalfOpen, r.state())
}

// TestIsolateForFromEveryState: from any state the breaker is Open for d with
// the transition's From the state it left; the trip window and the failure run
// are cleared, the trips and the measured normals kept, and probes in flight
// or attempts a ramp admitted are stragglers from then on.
func TestIsolateForFromEveryState(t *testing.T) {
	cfg := exact() // one failure trips it for 8 s; a ramp of 4 s
	toHalfOpen := []step{toRamp[0], toRamp[1]}
	for _, tc := range []struct {
		name  string
		setup []step
		from  breaker.State
		trips int
	}{
		{"closed", nil, breaker.Closed, 0},
		{"open", toRamp[:1], breaker.Open, 1},
		{"open, break elapsed", toHalfOpen, breaker.Open, 1},
		{"half-open", append(toHalfOpen, step{"a probe", admitOK, breaker.HalfOpen}), breaker.HalfOpen, 1},
		{"recovering", append(append([]step{}, toRamp...), step{"an attempt of the ramp", func(r *rig) { inFlight(r) }, breaker.Recovering}),
			breaker.Recovering, 1},
		{"isolated", []step{{"isolate", func(r *rig) { r.b.Isolate() }, breaker.Isolated}}, breaker.Isolated, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, cfg)
			for _, s := range tc.setup {
				s.do(r)
				require.Equal(t, s.state, r.state(), s.name)
			}
			if r.state() == breaker.Closed {
				r.run(ok, fast)
			}
			before := r.b.Snapshot()
			r.b.IsolateFor(time.Second)
			after := r.b.Snapshot()
			tr := r.events[len(r.events)-1].(breaker.Transition)
			assert.Equal(t, breaker.Transition{From: tc.from, To: breaker.Open, Cause: breaker.CauseForced, Break: time.Second, At: r.clock.Now()}, tr)
			assert.Equal(t, breaker.Open, after.State)
			assert.Equal(t, tc.trips, after.Trips)
			assert.Equal(t, before.Nominal, after.Nominal)
			assert.Zero(t, after.ConsecutiveFailures)
			assert.Zero(t, after.Probes)
			assert.Equal(t, [4]any{before.NormalLatency, before.NormalLatencyOK, before.NormalFailureRate, before.NormalFailureRateOK},
				[4]any{after.NormalLatency, after.NormalLatencyOK, after.NormalFailureRate, after.NormalFailureRateOK})

			// Anything still in flight is a straggler now.
			for _, tk := range r.ticket {
				r.b.Record(tk, fail, fast)
			}
			assert.Equal(t, after, r.b.Snapshot(), "a straggler counted")
			r.clock.Advance(time.Second)
			assert.Equal(t, breaker.HalfOpen, r.state())
		})
	}
}

// TestIsolateForAfterARampRanOut: a ramp that has run out reads Closed, with
// no break growth; IsolateFor closes it first, as the next admission would
// have, so that the growth it reads is what it keeps.
func TestIsolateForAfterARampRanOut(t *testing.T) {
	r := newRig(t, exact())
	for _, s := range toRamp {
		s.do(r)
	}
	r.clock.Advance(4 * time.Second)
	require.Equal(t, breaker.Closed, r.state())
	require.Equal(t, 0, r.b.Snapshot().Trips)
	r.b.IsolateFor(time.Second)
	assert.Equal(t, 0, r.b.Snapshot().Trips)
	assert.Equal(t, []string{"closed->open", "open->half-open", "half-open->recovering", "recovering->closed", "closed->open"},
		r.transitions())
}

// TestIsolateForThenARamp: the ramp after a forced break is as long as a
// fraction of that break, since it is the break just served.
func TestIsolateForThenARamp(t *testing.T) {
	r := newRig(t, exact()) // Recovery.Fraction 0.5
	r.b.IsolateFor(6 * time.Second)
	r.clock.Advance(6 * time.Second)
	times(2, func(r *rig) { r.run(ok, 0) })(r)
	s := r.b.Snapshot()
	require.Equal(t, breaker.Recovering, s.State)
	assert.Equal(t, 3*time.Second, s.RampLength)
}

// TestProbeSlotAfterAForcedBreak: a probe slot is held for a nominal break;
// before any trip, IsolateFor's break has no nominal one, and the slot is held
// for BreakDuration, not for no time at all (which would expire every probe
// at once and admit every attempt as one).
func TestProbeSlotAfterAForcedBreak(t *testing.T) {
	r := newRig(t, breaker.Config{BreakDuration: 10 * time.Second})
	r.b.IsolateFor(time.Millisecond)
	r.clock.Advance(time.Millisecond)
	probe := r.admit()
	require.True(t, r.ticket[probe].Probe())
	r.clock.Advance(10*time.Second - time.Nanosecond)
	assert.Equal(t, time.Duration(0), r.refused(), "the probe's slot expired early")
	r.b.Done(r.ticket[probe], ok)
	assert.Equal(t, 1, r.b.Snapshot().ProbeSuccesses)

	probe = r.admit()
	r.clock.Advance(10 * time.Second)
	r.b.Done(r.ticket[probe], ok) // its slot expired: ignored
	assert.Equal(t, 1, r.b.Snapshot().ProbeSuccesses)
}

// TestIsolateForWithoutAHook: a breaker without a hook refuses during a forced
// break without taking its lock, as during a trip's break.
func TestIsolateForWithoutAHook(t *testing.T) {
	clock := clockwork.NewFakeClockAt(epoch)
	b, err := breaker.New(breaker.Config{Clock: clock})
	require.NoError(t, err)
	b.IsolateFor(time.Minute)
	clock.Advance(time.Second)
	_, err = b.Admit()
	assert.Equal(t, 59*time.Second, refusalHint(t, err))
	allocs := testing.AllocsPerRun(100, func() { _, _ = b.Admit() })
	assert.Equal(t, 1.0, allocs, "Admit's own error, and nothing else")
	clock.Advance(59 * time.Second)
	_, err = b.Admit()
	assert.NoError(t, err)
}

// TestIsolateForInShadowMode: a shadow breaker forced open refuses nothing,
// and says what it would have refused.
func TestIsolateForInShadowMode(t *testing.T) {
	r := newRig(t, breaker.Config{Shadow: true})
	r.b.IsolateFor(time.Second)
	assert.Equal(t, breaker.Transition{From: breaker.Closed, To: breaker.Open, Cause: breaker.CauseForced,
		Break: time.Second, At: epoch, Shadow: true}, r.events[0])
	i := r.admit()
	assert.True(t, r.ticket[i].Shadow())
	assert.Equal(t, breaker.Rejection{State: breaker.Open, RetryAfter: time.Second, At: epoch, Shadow: true}, r.events[1])
}

// TestIsolateForRefusesImpossibleDurations: a break of no time, a negative one
// or one above MaxDuration is a mistake in the caller, and panics with a
// message naming IsolateFor and the value, before the breaker changes.
func TestIsolateForRefusesImpossibleDurations(t *testing.T) {
	r := newRig(t, breaker.Config{})
	for _, d := range []time.Duration{0, -time.Nanosecond, math.MinInt64, breaker.MaxDuration + 1, math.MaxInt64} {
		msg := func() (msg any) {
			defer func() { msg = recover() }()
			r.b.IsolateFor(d)
			return nil
		}()
		require.IsType(t, "", msg, "IsolateFor(%v) did not panic with a message", d)
		assert.True(t, strings.Contains(msg.(string), "IsolateFor") && strings.Contains(msg.(string), fmt.Sprint(d)),
			"IsolateFor(%v) panicked with %q", d, msg)
	}
	assert.Equal(t, breaker.Closed, r.state())
	assert.Empty(t, r.events)
	r.b.IsolateFor(breaker.MaxDuration)
	assert.Equal(t, breaker.MaxDuration, r.refused())
}

// TestNewMethodsOfAZeroBreakerPanicNamingNew: like every method, the ones of
// shadow mode and IsolateFor panic on a Breaker New did not build.
func TestNewMethodsOfAZeroBreakerPanicNamingNew(t *testing.T) {
	for name, use := range map[string]func(b *breaker.Breaker){
		"IsolateFor": func(b *breaker.Breaker) { b.IsolateFor(time.Second) },
		"SetShadow":  func(b *breaker.Breaker) { b.SetShadow(true) },
		"Shadow":     func(b *breaker.Breaker) { b.Shadow() },
	} {
		assert.PanicsWithValue(t, zeroPanic, func() { use(new(breaker.Breaker)) }, name)
	}
}

func TestCauseForcedString(t *testing.T) {
	assert.Equal(t, "forced open", breaker.CauseForced.String())
}

package breaker_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	conf "github.com/resilience-go/pipeline/internal/breakerconf"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/breaker"
)

// exact is a breaker with a ramp whose numbers are exact in binary: one failure
// opens it for 8 s, and the ramp that follows climbs from 1/8 to 1 over 4 s
// (half the time it was open), so that p is 11/32 after 1 s, 18/32 after 2 s
// and 25/32 after 3 s. Calls above 100 ms are slow; the measured normal is
// off, and so is the trickle (trickle_test.go tests it).
func exact() breaker.Config {
	return breaker.Config{
		ConsecutiveFailures: 1,
		BreakDuration:       8 * time.Second,
		BreakJitter:         breaker.JitterNone,
		SlowCallThreshold:   100 * time.Millisecond,
		SlowCalls:           breaker.SlowCalls{Disabled: true},
		Recovery:            &breaker.Recovery{Fraction: 0.5, Initial: 0.125, TrickleEvery: -1},
	}
}

const (
	fast = time.Millisecond
	slow = 200 * time.Millisecond
)

// toRamp trips a fresh exact breaker and lets two instant probes succeed.
var toRamp = []step{
	{"trip", func(r *rig) { r.run(fail, 0) }, breaker.Open},
	{"break ends", advance(8 * time.Second), breaker.HalfOpen},
	{"two instant probes succeed", times(2, func(r *rig) { r.run(ok, 0) }), breaker.Recovering},
}

// offers offers n attempts at the current instant, records every admitted one as
// an instant success, and requires want of them admitted, every refusal carrying
// the hint.
func offers(n, want int, hint time.Duration) func(*rig) {
	return func(r *rig) {
		r.t.Helper()
		admitted := 0
		for range n {
			t, err := r.b.Admit()
			if err != nil {
				require.Equal(r.t, hint, refusalHint(r.t, err))
				continue
			}
			admitted++
			r.b.Record(t, ok, 0)
		}
		assert.Equal(r.t, want, admitted, "admitted of %d offers", n)
	}
}

// refusalHint requires err to be the breaker's refusal and returns its hint.
func refusalHint(t *testing.T, err error) time.Duration {
	t.Helper()
	se, isStop := errors.AsType[*pipeline.StopError](err)
	require.True(t, isStop, "error %T is not a *pipeline.StopError", err)
	assert.Equal(t, "breaker", se.Stage)
	assert.Equal(t, pipeline.DependencyUnavailable, se.Reason)
	return se.RetryAfter
}

// rampCall offers attempts until one is admitted, and records v with duration d
// for it at the current instant.
func rampCall(v outcome.Verdict, d time.Duration) func(*rig) {
	return func(r *rig) {
		r.t.Helper()
		r.b.Record(r.ticket[inFlight(r)], v, d)
	}
}

// inFlight offers attempts until one is admitted and returns its ticket index.
func inFlight(r *rig) int {
	r.t.Helper()
	for range 1000 {
		if t, err := r.b.Admit(); err == nil {
			r.ticket = append(r.ticket, t)
			return len(r.ticket) - 1
		}
	}
	r.t.Fatal("nothing admitted in 1000 offers")
	return 0
}

// terms requires the ramp's admitted fraction and whether slow calls hold it.
func terms(p float64, held bool) func(*rig) {
	return func(r *rig) {
		r.t.Helper()
		s := r.b.Snapshot()
		assert.Equal(r.t, p, s.RampFraction, "admitted fraction")
		assert.Equal(r.t, held, s.RampHeld, "held")
	}
}

func lastCause(want breaker.Cause) func(*rig) {
	return func(r *rig) {
		r.t.Helper()
		for i := len(r.events) - 1; i >= 0; i-- {
			if tr, isTr := r.events[i].(breaker.Transition); isTr {
				assert.Equal(r.t, want, tr.Cause)
				return
			}
		}
		r.t.Fatal("no transition")
	}
}

func TestRamp(t *testing.T) {
	windowed := exact()
	windowed.MinimumCalls = 2
	tests := []struct {
		name  string
		cfg   breaker.Config
		steps []step
	}{
		{"a healthy ramp is paced by the clock", exact(), []step{
			{"t=0: p=1/8", terms(0.125, false), breaker.Recovering},
			{"4 of 32 admitted; refusals carry no hint", offers(32, 4, 0), breaker.Recovering},
			{"t=1s", advance(time.Second), breaker.Recovering},
			{"p=11/32", terms(11.0/32, false), breaker.Recovering},
			{"11 of 32", offers(32, 11, 0), breaker.Recovering},
			{"t=2s: 18 of 32", func(r *rig) { r.clock.Advance(time.Second); offers(32, 18, 0)(r) }, breaker.Recovering},
			{"t=3s: 25 of 32", func(r *rig) { r.clock.Advance(time.Second); offers(32, 25, 0)(r) }, breaker.Recovering},
			{"t=4s: the ramp has run out and reads Closed", advance(time.Second), breaker.Closed},
			{"everything admitted", offers(32, 32, 0), breaker.Closed},
			{"closed by the ramp", lastCause(breaker.CauseRampDone), breaker.Closed},
		}},
		{"slow calls hold the ramp and never trip it", windowed, []step{
			{"t=2s", advance(2 * time.Second), breaker.Recovering},
			{"p=18/32", terms(0.5625, false), breaker.Recovering},
			{"a slow call holds p", rampCall(ok, slow), breaker.Recovering},
			{"where it stood", terms(0.5625, true), breaker.Recovering},
			{"a second slow call", rampCall(ok, slow), breaker.Recovering},
			{"past the ramp's end", advance(2 * time.Second), breaker.Recovering},
			{"still held", terms(0.5625, true), breaker.Recovering},
			{"an hour later, still held", advance(time.Hour), breaker.Recovering},
			{"one fast call: not released yet", rampCall(ok, fast), breaker.Recovering},
			{"a throttled answer neither ends the run nor counts", rampCall(throttled, slow), breaker.Recovering},
			{"held", terms(0.5625, true), breaker.Recovering},
			{"two fast in a row release it", rampCall(ok, fast), breaker.Recovering},
			{"from where it stood", terms(0.5625, false), breaker.Recovering},
			{"1 s later", advance(time.Second), breaker.Recovering},
			{"it climbs again: p=25/32", terms(25.0/32, false), breaker.Recovering},
			{"the ramp runs out", advance(time.Second), breaker.Closed},
			{"closed by the next admission", admitOK, breaker.Closed},
			{"the trip window was fed no slow call: one fast sample", runOK, breaker.Closed},
			{"and a slow one trip it now (MinimumCalls 2)", func(r *rig) { r.run(ok, slow) }, breaker.Open},
			{"on slow calls", lastCause(breaker.CauseSlowCalls), breaker.Open},
		}},
		{"with ConsecutiveFailures 1, a failure re-opens at once, with the grown break", exact(), []step{
			{"t=1s", advance(time.Second), breaker.Recovering},
			{"a ramp attempt fails", rampCall(fail, fast), breaker.Open},
			{"because the ramp failed", lastCause(breaker.CauseRampFailed), breaker.Open},
			{"refused for twice 8 s", refuse(16 * time.Second), breaker.Open},
			{"break ends", advance(16 * time.Second), breaker.HalfOpen},
			{"probes succeed", times(2, func(r *rig) { r.run(ok, 0) }), breaker.Recovering},
			{"the ramp is half of 16 s", func(r *rig) { assert.Equal(r.t, 8*time.Second, r.b.Snapshot().RampLength) }, breaker.Recovering},
			{"growth is kept while recovering", func(r *rig) { assert.Equal(r.t, 2, r.b.Snapshot().Trips) }, breaker.Recovering},
			{"it runs out", advance(8 * time.Second), breaker.Closed},
			{"and is closed", admitOK, breaker.Closed},
			{"the next trip breaks for 8 s again", func(r *rig) { r.run(fail, 0) }, breaker.Open},
			{"growth was reset by the clean close", refuse(8 * time.Second), breaker.Open},
		}},
		{"a straggler from before the break is ignored", exact(), []step{
			{"reset; a straggler admitted", func(r *rig) { r.b.Reset(); r.ticket = nil; r.admit() }, breaker.Closed},
			{"to the ramp again", func(r *rig) {
				for _, s := range toRamp {
					s.do(r)
				}
			}, breaker.Recovering},
			{"the straggler fails", record(0, fail), breaker.Recovering},
			{"and nothing moved", terms(0.125, false), breaker.Recovering},
		}},
		{"an outcome after the ramp ran out closes it first", exact(), []step{
			{"a ramp attempt in flight", func(r *rig) { inFlight(r) }, breaker.Recovering},
			{"the ramp runs out", advance(4 * time.Second), breaker.Closed},
			{"it reads Closed and nothing has moved", func(r *rig) {
				assert.Equal(r.t, []string{"closed->open", "open->half-open", "half-open->recovering"}, r.transitions())
			}, breaker.Closed},
			{"the attempt fails: a closed-state failure", func(r *rig) { r.b.Record(r.ticket[len(r.ticket)-1], fail, fast) }, breaker.Open},
			{"closed by the ramp, then tripped as a closed breaker", func(r *rig) {
				assert.Equal(r.t, []string{"closed->open", "open->half-open", "half-open->recovering",
					"recovering->closed", "closed->open"}, r.transitions())
			}, breaker.Open},
			{"on its first failure", lastCause(breaker.CauseConsecutiveFailures), breaker.Open},
			{"with the first break: the ramp had ended cleanly", refuse(8 * time.Second), breaker.Open},
		}},
		{"isolate from Recovering", exact(), []step{
			{"a ramp attempt in flight", func(r *rig) { inFlight(r) }, breaker.Recovering},
			{"isolate", func(r *rig) { r.b.Isolate() }, breaker.Isolated},
			{"refused without a hint", refuse(0), breaker.Isolated},
			{"the attempt's failure is ignored", func(r *rig) { r.b.Record(r.ticket[len(r.ticket)-1], fail, fast) }, breaker.Isolated},
			{"past the ramp's end", advance(time.Minute), breaker.Isolated},
			{"reset", func(r *rig) { r.b.Reset() }, breaker.Closed},
			{"growth zeroed", func(r *rig) { assert.Equal(r.t, 0, r.b.Snapshot().Trips) }, breaker.Closed},
		}},
		{"reset from Recovering", exact(), []step{
			{"a ramp attempt in flight", func(r *rig) { inFlight(r) }, breaker.Recovering},
			{"reset", func(r *rig) { r.b.Reset() }, breaker.Closed},
			{"by reset", lastCause(breaker.CauseReset), breaker.Closed},
			{"everything admitted", offers(10, 10, 0), breaker.Closed},
			{"the attempt fails: a closed-state sample", func(r *rig) { r.b.Record(r.ticket[len(r.ticket)-1], fail, fast) }, breaker.Open},
			{"with the first break", refuse(8 * time.Second), breaker.Open},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, tc.cfg)
			for _, s := range append(toRamp[:len(toRamp):len(toRamp)], tc.steps...) {
				s.do(r)
				require.Equal(t, s.state, r.state(), "after %q", s.name)
			}
		})
	}
}

// TestRampCountsOnlyItsOwnAttempts: a probe still in flight when the ramp began,
// and an attempt admitted by an earlier ramp, are not the current ramp's
// evidence.
func TestRampCountsOnlyItsOwnAttempts(t *testing.T) {
	cfg := exact()
	cfg.HalfOpenProbes = 3
	r := newRig(t, cfg)
	r.run(fail, 0)
	r.clock.Advance(8 * time.Second)
	p1, p2, p3 := r.admit(), r.admit(), r.admit()
	r.b.Record(r.ticket[p1], ok, 0)
	r.b.Record(r.ticket[p2], ok, 0)
	require.Equal(t, breaker.Recovering, r.state())
	r.b.Record(r.ticket[p3], fail, fast)
	require.Equal(t, breaker.Recovering, r.state(), "a late probe is not the ramp's")

	a, b := inFlight(r), inFlight(r)
	r.b.Record(r.ticket[a], fail, fast)
	require.Equal(t, breaker.Open, r.state())
	r.clock.Advance(16 * time.Second)
	r.run(ok, 0)
	r.run(ok, 0)
	require.Equal(t, breaker.Recovering, r.state())
	r.b.Record(r.ticket[b], ok, slow)
	r.b.Record(r.ticket[b], fail, fast)
	assert.Equal(t, breaker.Recovering, r.state(), "the first ramp's attempt is a straggler to the second")
	terms(0.125, false)(r)
}

// TestSlowProbeStartsTheRamp: with a ramp, slow but successful probes are the
// third answer, a ramp held at Initial from the start; without one they
// re-open. (Four slow probes, a lead of ProbeSlowLead over the fast ones.)
func TestSlowProbeStartsTheRamp(t *testing.T) {
	for _, ramp := range []bool{true, false} {
		cfg := exact()
		if !ramp {
			cfg.Recovery = nil
		}
		r := newRig(t, cfg)
		r.run(fail, 0)
		r.clock.Advance(8 * time.Second)
		for range conf.DefaultProbeSlowLead - 1 {
			r.run(ok, slow)
		}
		require.Equal(t, breaker.HalfOpen, r.state(), "three slow probes may be the tail")
		r.run(ok, slow)
		if !ramp {
			assert.Equal(t, breaker.Open, r.state(), "a slow probe is not a recovery")
			assert.Equal(t, 16*time.Second, r.refused())
			continue
		}
		require.Equal(t, breaker.Recovering, r.state(), "the fourth slow probe starts the ramp")
		lastCause(breaker.CauseProbeSlow)(r)
		terms(0.125, true)(r)
		r.clock.Advance(4 * time.Second)
		assert.Equal(t, breaker.Recovering, r.state(), "held after the ramp's length has passed")
		rampCall(ok, fast)(r)
		rampCall(ok, fast)(r)
		terms(0.125, false)(r)
		r.clock.Advance(r.b.Snapshot().RampLength)
		assert.Equal(t, breaker.Closed, r.state(), "released by two fast calls, it climbs over its length")
	}
}

// A ramp's refusals must not send the callers it sheds back at one instant:
// refused at 0, 0.5, 1 and 2 s into a 2.5 s ramp, a caller honouring the hint
// would otherwise come back at the ramp's end together with all the others.
// They carry no hint, so each caller's own jittered backoff spreads them.
func TestRampRefusalsAimNoOneInstant(t *testing.T) {
	r := newRig(t, breaker.Config{
		ConsecutiveFailures: 1, BreakDuration: 10 * time.Second, BreakJitter: breaker.JitterNone,
		ProbeSuccesses: 1, Recovery: &breaker.Recovery{Fraction: 0.25, Initial: 0.05},
	})
	r.serve(1, fail, 0, 0)
	r.clock.Advance(10 * time.Second)
	r.serve(1, ok, 0, 0) // the probe: a 2.5 s ramp begins
	require.Equal(t, breaker.Recovering, r.state())
	comeBack := map[time.Time]int{}
	for _, at := range []time.Duration{0, 500 * time.Millisecond, 500 * time.Millisecond, time.Second} {
		r.clock.Advance(at)
		for range 8 {
			tk, err := r.b.Admit()
			if err != nil {
				hint := refusalHint(t, err)
				assert.Zero(t, hint, "a ramp refusal carries no hint")
				comeBack[r.clock.Now().Add(hint)]++
				continue
			}
			r.b.Record(tk, ok, 0)
		}
	}
	assert.GreaterOrEqual(t, len(comeBack), 3, "refusals at different moments point at different instants: %v", comeBack)
}

// TestAFailureSetsTheRampBack: below Config.ConsecutiveFailures in a row, a
// failed attempt of the ramp halves p and doubles the ramp's length, once per
// round: an attempt admitted before the setback causes no other one. The run
// of failures in a row re-opens it.
func TestAFailureSetsTheRampBack(t *testing.T) {
	cfg := exact()
	cfg.ConsecutiveFailures = 3
	r := newRig(t, cfg)
	for range 3 {
		r.run(fail, 0)
	}
	require.Equal(t, breaker.Open, r.state())
	r.clock.Advance(8 * time.Second)
	r.run(ok, 0)
	r.run(ok, 0)
	require.Equal(t, breaker.Recovering, r.state())
	require.Equal(t, 4*time.Second, r.b.Snapshot().RampLength, "half of the 8 s it was open")

	r.clock.Advance(2 * time.Second)
	terms(0.5625, false)(r)
	a, b := inFlight(r), inFlight(r)
	r.b.Record(r.ticket[a], fail, fast)
	s := r.b.Snapshot()
	assert.Equal(t, breaker.Recovering, s.State, "one failure is a setback, not a trip")
	assert.InDelta(t, 0.5625/2, s.RampFraction, 1e-9, "p halves")
	assert.Equal(t, 8*time.Second, s.RampLength, "and the ramp's length doubles")
	r.b.Record(r.ticket[b], fail, fast)
	s = r.b.Snapshot()
	assert.InDelta(t, 0.5625/2, s.RampFraction, 1e-9, "an attempt sent before the setback sets nothing back")
	assert.Equal(t, 8*time.Second, s.RampLength)

	rampCall(ok, fast)(r) // ends the run of failures
	r.clock.Advance(time.Second)
	assert.InDelta(t, 0.5625/2+0.875/8, r.b.Snapshot().RampFraction, 1e-9, "p climbs again over the longer ramp")
	rampCall(fail, fast)(r)
	assert.InDelta(t, (0.5625/2+0.875/8)/2, r.b.Snapshot().RampFraction, 1e-9)
	assert.Equal(t, 16*time.Second, r.b.Snapshot().RampLength)
	rampCall(fail, fast)(r)
	rampCall(fail, fast)(r)
	assert.Equal(t, breaker.Open, r.state(), "three failures in a row re-open")
	lastCause(breaker.CauseRampFailed)(r)
	assert.Equal(t, 16*time.Second, r.refused(), "with the grown break")
}

// TestSetbacksNeverGoBelowInitialNorBeyondMaximum: repeated setbacks floor p
// at Initial and cap the ramp's length at Maximum.
func TestSetbacksNeverGoBelowInitialNorBeyondMaximum(t *testing.T) {
	cfg := exact()
	cfg.ConsecutiveFailures = 100
	cfg.Recovery.Maximum = 10 * time.Second
	r := newRig(t, cfg)
	for range 100 {
		r.run(fail, 0)
	}
	r.clock.Advance(8 * time.Second)
	r.run(ok, 0)
	r.run(ok, 0)
	require.Equal(t, breaker.Recovering, r.state())
	for range 20 {
		rampCall(fail, fast)(r)
		r.clock.Advance(time.Millisecond)
	}
	s := r.b.Snapshot()
	assert.Equal(t, breaker.Recovering, s.State)
	assert.InDelta(t, 0.125, s.RampFraction, 0.001, "floored at Initial")
	assert.Equal(t, 10*time.Second, s.RampLength, "capped at Maximum")
}

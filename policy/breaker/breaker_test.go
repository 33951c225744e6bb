package breaker_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/breaker"

	"github.com/resilience-go/pipeline/internal/testcheck"
)

// step is one row of a state-machine table: an operation and the state read after it.
type step struct {
	name  string
	do    func(r *rig)
	state breaker.State
}

func admitOK(r *rig)                     { r.admit() }
func runOK(r *rig)                       { r.run(ok, time.Millisecond) }
func runFail(r *rig)                     { r.run(fail, time.Millisecond) }
func advance(d time.Duration) func(*rig) { return func(r *rig) { r.clock.Advance(d) } }
func record(i int, v outcome.Verdict) func(*rig) {
	return func(r *rig) { r.b.Record(r.ticket[i], v, time.Millisecond) }
}
func refuse(retry time.Duration) func(*rig) {
	return func(r *rig) { assert.Equal(r.t, retry, r.refused()) }
}
func times(n int, f func(*rig)) func(*rig) {
	return func(r *rig) {
		for range n {
			f(r)
		}
	}
}

func TestTransitions(t *testing.T) {
	none := breaker.Config{BreakJitter: breaker.JitterNone}
	tests := []struct {
		name  string
		cfg   breaker.Config
		steps []step
	}{
		{"consecutive failures trip at the fifth", none, []step{
			{"4 failures", times(4, runFail), breaker.Closed},
			{"5th failure", runFail, breaker.Open},
			{"refused with the whole break", refuse(15 * time.Second), breaker.Open},
			{"1 ns before the break ends", advance(15*time.Second - time.Nanosecond), breaker.Open},
			{"exactly the break", advance(time.Nanosecond), breaker.HalfOpen},
		}},
		{"a success ends the failure run", none, []step{
			{"4 failures", times(4, runFail), breaker.Closed},
			{"success", runOK, breaker.Closed},
			{"4 more failures", times(4, runFail), breaker.Closed},
			{"5th in a row", runFail, breaker.Open},
		}},
		{"non-evidence neither counts nor ends the run", none, []step{
			{"4 failures", times(4, runFail), breaker.Closed},
			{"throttled, permanent, canceled, self-imposed", func(r *rig) {
				for _, v := range []outcome.Verdict{throttled, permanent, canceled, selfImp} {
					r.run(v, time.Millisecond)
				}
			}, breaker.Closed},
			{"5th failure", runFail, breaker.Open},
		}},
		{"two probe successes are needed", none, []step{
			{"trip", times(5, runFail), breaker.Open},
			{"break ends", advance(15 * time.Second), breaker.HalfOpen},
			{"first probe succeeds", runOK, breaker.HalfOpen},
			{"second probe succeeds", runOK, breaker.Closed},
		}},
		{"one probe at a time", none, []step{
			{"trip", times(5, runFail), breaker.Open},
			{"break ends", advance(15 * time.Second), breaker.HalfOpen},
			{"probe admitted", admitOK, breaker.HalfOpen},
			{"second attempt refused, no hint", refuse(0), breaker.HalfOpen},
			{"probe succeeds", record(5, ok), breaker.HalfOpen},
			{"next probe admitted", admitOK, breaker.HalfOpen},
			{"it succeeds", record(6, ok), breaker.Closed},
		}},
		{"a failed probe re-opens with a doubled break", none, []step{
			{"trip", times(5, runFail), breaker.Open},
			{"break ends", advance(15 * time.Second), breaker.HalfOpen},
			{"probe fails", runFail, breaker.Open},
			{"refused for the doubled break", refuse(30 * time.Second), breaker.Open},
		}},
		{"a non-evidence probe frees its slot and decides nothing", none, []step{
			{"trip", times(5, runFail), breaker.Open},
			{"break ends", advance(15 * time.Second), breaker.HalfOpen},
			{"throttled probe", func(r *rig) { r.run(throttled, time.Millisecond) }, breaker.HalfOpen},
			{"two successes", times(2, runOK), breaker.Closed},
		}},
		{"slow probes re-open once they lead the fast ones by ProbeSlowLead", breaker.Config{BreakJitter: breaker.JitterNone, SlowCallThreshold: time.Second}, []step{
			{"trip", times(5, runFail), breaker.Open},
			{"break ends", advance(15 * time.Second), breaker.HalfOpen},
			{"slow probe: one slow call may be the tail", func(r *rig) { r.run(ok, 2*time.Second) }, breaker.HalfOpen},
			{"fast probe: even again", func(r *rig) { r.run(ok, time.Millisecond) }, breaker.HalfOpen},
			{"slow probes: a lead of three", times(3, func(r *rig) { r.run(ok, 2*time.Second) }), breaker.HalfOpen},
			{"slow probe: a lead of four", func(r *rig) { r.run(ok, 2*time.Second) }, breaker.Open},
		}},
		{"a probe is slow above ProbeSlowFraction of the threshold", breaker.Config{BreakJitter: breaker.JitterNone, SlowCallThreshold: time.Second, ProbeSuccesses: 1, ProbeSlowLead: 1}, []step{
			{"trip", times(5, runFail), breaker.Open},
			{"break ends", advance(15 * time.Second), breaker.HalfOpen},
			{"a probe of 0.7 s is fast", func(r *rig) { r.run(ok, 700*time.Millisecond) }, breaker.Closed},
			{"trip again", times(5, runFail), breaker.Open},
			{"the break ends again", advance(15 * time.Second), breaker.HalfOpen},
			{"a probe of 0.7 s and a nanosecond is slow", func(r *rig) { r.run(ok, 700*time.Millisecond+1) }, breaker.Open},
		}},
		{"fast probes close once they lead the slow ones by ProbeSuccesses", breaker.Config{BreakJitter: breaker.JitterNone, SlowCallThreshold: time.Second}, []step{
			{"trip", times(5, runFail), breaker.Open},
			{"break ends", advance(15 * time.Second), breaker.HalfOpen},
			{"slow probe", func(r *rig) { r.run(ok, 2*time.Second) }, breaker.HalfOpen},
			{"fast probe", func(r *rig) { r.run(ok, time.Millisecond) }, breaker.HalfOpen},
			{"fast probe: a lead of one", func(r *rig) { r.run(ok, time.Millisecond) }, breaker.HalfOpen},
			{"fast probe: a lead of two", func(r *rig) { r.run(ok, time.Millisecond) }, breaker.Closed},
		}},
		{"a straggler success while Open does not close it", none, []step{
			{"straggler admitted", admitOK, breaker.Closed},
			{"trip", times(5, runFail), breaker.Open},
			{"straggler succeeds", record(0, ok), breaker.Open},
			{"break unchanged", refuse(15 * time.Second), breaker.Open},
		}},
		{"a straggler failure while Open does not extend it", none, []step{
			{"straggler admitted", admitOK, breaker.Closed},
			{"trip", times(5, runFail), breaker.Open},
			{"half the break", advance(7 * time.Second), breaker.Open},
			{"straggler fails", record(0, fail), breaker.Open},
			{"break unchanged", refuse(8 * time.Second), breaker.Open},
		}},
		{"a straggler while HalfOpen is not a probe", none, []step{
			{"straggler admitted", admitOK, breaker.Closed},
			{"trip", times(5, runFail), breaker.Open},
			{"break ends", advance(15 * time.Second), breaker.HalfOpen},
			{"probe admitted", admitOK, breaker.HalfOpen},
			{"straggler fails", record(0, fail), breaker.HalfOpen},
			{"straggler ok", record(0, ok), breaker.HalfOpen},
			{"probe still holds the slot", refuse(0), breaker.HalfOpen},
		}},
		{"a probe slot expires after a break", none, []step{
			{"trip", times(5, runFail), breaker.Open},
			{"break ends", advance(15 * time.Second), breaker.HalfOpen},
			{"probe admitted and lost", admitOK, breaker.HalfOpen},
			{"refused while it runs", refuse(0), breaker.HalfOpen},
			{"just before expiry", advance(15*time.Second - time.Nanosecond), breaker.HalfOpen},
			{"still refused", refuse(0), breaker.HalfOpen},
			{"expiry", advance(time.Nanosecond), breaker.HalfOpen},
			{"a new probe is admitted", admitOK, breaker.HalfOpen},
			{"the lost probe's late failure is ignored", record(5, fail), breaker.HalfOpen},
			{"the new probe succeeds", record(6, ok), breaker.HalfOpen},
			{"another succeeds", runOK, breaker.Closed},
		}},
		{"isolated never heals", none, []step{
			{"isolate", func(r *rig) { r.b.Isolate() }, breaker.Isolated},
			{"refused without a hint", refuse(0), breaker.Isolated},
			{"an hour later", advance(time.Hour), breaker.Isolated},
			{"still refused", refuse(0), breaker.Isolated},
			{"reset", func(r *rig) { r.b.Reset() }, breaker.Closed},
			{"admitted", runOK, breaker.Closed},
		}},
		{"reset while open zeroes growth", none, []step{
			{"trip", times(5, runFail), breaker.Open},
			{"break ends", advance(15 * time.Second), breaker.HalfOpen},
			{"probe fails", runFail, breaker.Open},
			{"reset", func(r *rig) { r.b.Reset() }, breaker.Closed},
			{"trip again", times(5, runFail), breaker.Open},
			{"first break again", refuse(15 * time.Second), breaker.Open},
		}},
		{"reset with a probe in flight: the probe is a closed sample", breaker.Config{BreakJitter: breaker.JitterNone, ConsecutiveFailures: 1}, []step{
			{"trip", runFail, breaker.Open},
			{"break ends", advance(15 * time.Second), breaker.HalfOpen},
			{"probe admitted", admitOK, breaker.HalfOpen},
			{"reset", func(r *rig) { r.b.Reset() }, breaker.Closed},
			{"probe fails and re-trips", record(1, fail), breaker.Open},
			{"with the first break", refuse(15 * time.Second), breaker.Open},
		}},
		{"failure ratio trips once minimum calls are in", breaker.Config{BreakJitter: breaker.JitterNone, FailureRatio: 0.5, MinimumCalls: 4}, []step{
			{"ok, fail, ok", func(r *rig) { runOK(r); runFail(r); runOK(r) }, breaker.Closed},
			{"fail: 2 of 4", runFail, breaker.Open},
		}},
		{"failure ratio forgets samples that left the window", breaker.Config{BreakJitter: breaker.JitterNone, FailureRatio: 0.5, MinimumCalls: 4}, []step{
			{"fail, fail, ok", func(r *rig) { runFail(r); runFail(r); runOK(r) }, breaker.Closed},
			{"30 s later", advance(30 * time.Second), breaker.Closed},
			{"ok, fail, ok, ok: 1 of 4", func(r *rig) { runOK(r); runFail(r); runOK(r); runOK(r) }, breaker.Closed},
		}},
		{"slow-call ratio trips", breaker.Config{BreakJitter: breaker.JitterNone, SlowCallThreshold: time.Second, MinimumCalls: 4}, []step{
			{"fast, slow, fast", func(r *rig) {
				r.run(ok, time.Millisecond)
				r.run(ok, 2*time.Second)
				r.run(ok, time.Millisecond)
			}, breaker.Closed},
			{"slow: 2 of 4", func(r *rig) { r.run(ok, 2*time.Second) }, breaker.Open},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, tc.cfg)
			for _, s := range tc.steps {
				s.do(r)
				require.Equal(t, s.state, r.state(), "after %q", s.name)
			}
		})
	}
}

func TestBreakGrowth(t *testing.T) {
	r := newRig(t, breaker.Config{BreakJitter: breaker.JitterNone, ConsecutiveFailures: 1})
	runFail(r)
	for _, want := range []time.Duration{15, 30, 60, 120, 120} {
		want *= time.Second
		require.Equal(t, breaker.Open, r.state())
		s := r.b.Snapshot()
		assert.Equal(t, want, s.Nominal)
		assert.Equal(t, want, s.Break)
		assert.Equal(t, want, r.refused())
		r.clock.Advance(want)
		require.Equal(t, breaker.HalfOpen, r.state())
		runFail(r) // the probe fails: re-open, grown
	}
}

func TestBreakGrowthResetsOnClose(t *testing.T) {
	r := newRig(t, breaker.Config{BreakJitter: breaker.JitterNone, ConsecutiveFailures: 1})
	runFail(r)
	r.clock.Advance(15 * time.Second)
	runFail(r) // 30 s
	r.clock.Advance(30 * time.Second)
	runOK(r)
	runOK(r)
	require.Equal(t, breaker.Closed, r.state())
	runFail(r)
	assert.Equal(t, 15*time.Second, r.refused())
}

func TestEqualJitterWithinBounds(t *testing.T) {
	r := newRig(t, breaker.Config{ConsecutiveFailures: 1, MaxBreakDuration: 40 * time.Second})
	distinct := map[time.Duration]bool{}
	nominal := []time.Duration{15 * time.Second, 30 * time.Second, 40 * time.Second, 40 * time.Second}
	for round := range 50 {
		r.b.Reset()
		runFail(r)
		for _, d := range nominal {
			s := r.b.Snapshot()
			require.Equal(t, d, s.Nominal, "round %d", round)
			assert.GreaterOrEqual(t, s.Break, d/2)
			assert.LessOrEqual(t, s.Break, d)
			assert.Equal(t, s.Break, r.refused(), "the hint is the break actually served")
			distinct[s.Break] = true
			r.clock.Advance(s.Break)
			runFail(r)
		}
	}
	assert.Greater(t, len(distinct), 100, "jitter varies the break")
}

func TestFullJitterNeverLengthens(t *testing.T) {
	r := newRig(t, breaker.Config{ConsecutiveFailures: 1, BreakJitter: breaker.JitterFull})
	below := false
	for range 200 {
		r.b.Reset()
		runFail(r)
		s := r.b.Snapshot()
		assert.LessOrEqual(t, s.Break, 15*time.Second)
		assert.GreaterOrEqual(t, s.Break, time.Duration(0))
		below = below || s.Break < 7500*time.Millisecond
	}
	assert.True(t, below, "full jitter reaches below the equal-jitter floor")
}

func TestStateReadsDoNotMutate(t *testing.T) {
	r := newRig(t, breaker.Config{BreakJitter: breaker.JitterNone, ConsecutiveFailures: 1})
	runFail(r)
	r.clock.Advance(time.Minute)
	before := len(r.events)
	for range 3 {
		assert.Equal(t, breaker.HalfOpen, r.state())
		assert.Equal(t, 0, r.b.Snapshot().Probes)
	}
	assert.Equal(t, before, len(r.events), "no transition on read")
	r.admit()
	assert.Equal(t, []string{"closed->open", "open->half-open"}, r.transitions())
	assert.Equal(t, 1, r.b.Snapshot().Probes)
}

func TestZeroTicketIsIgnored(t *testing.T) {
	r := newRig(t, breaker.Config{ConsecutiveFailures: 1})
	r.b.Done(breaker.Ticket{}, fail)
	r.b.Record(breaker.Ticket{}, fail, time.Second)
	assert.Equal(t, breaker.Closed, r.state())
}

// zeroPanic is what every method of a Breaker not built by New panics with.
const zeroPanic = "breaker: Breaker used without breaker.New (its zero value is not usable)"

// TestZeroBreakerPanicsNamingNew: a Breaker declared instead of built by New
// fails at first use, whatever the first use is, with a panic naming New,
// rather than admitting, then refusing forever while reading half-open.
func TestZeroBreakerPanicsNamingNew(t *testing.T) {
	for name, use := range map[string]func(b *breaker.Breaker){
		"Admit":             func(b *breaker.Breaker) { _, _ = b.Admit() },
		"Record":            func(b *breaker.Breaker) { b.Record(breaker.Ticket{}, fail, time.Millisecond) },
		"Done":              func(b *breaker.Breaker) { b.Done(breaker.Ticket{}, fail) },
		"State":             func(b *breaker.Breaker) { b.State() },
		"Snapshot":          func(b *breaker.Breaker) { b.Snapshot() },
		"Pressure":          func(b *breaker.Breaker) { b.Pressure() },
		"NormalLatency":     func(b *breaker.Breaker) { b.NormalLatency() },
		"NormalFailureRate": func(b *breaker.Breaker) { b.NormalFailureRate() },
		"Isolate":           func(b *breaker.Breaker) { b.Isolate() },
		"Reset":             func(b *breaker.Breaker) { b.Reset() },
		"Guard":             func(b *breaker.Breaker) { breaker.Guard[int](b) },
	} {
		var zero breaker.Breaker
		assert.PanicsWithValue(t, zeroPanic, func() { use(&zero) }, name)
		assert.PanicsWithValue(t, zeroPanic, func() { use(new(breaker.Breaker)) }, name)
	}
}

// TestZeroBreakerPanicLeavesNothingLocked: the panic comes before the lock is
// taken, so a caller that recovers it leaves the breaker as it found it, and a
// use from another goroutine fails the same way at once instead of blocking.
func TestZeroBreakerPanicLeavesNothingLocked(t *testing.T) {
	b := new(breaker.Breaker)
	assert.PanicsWithValue(t, zeroPanic, func() { b.Done(breaker.Ticket{}, fail) })
	assert.Equal(t, zeroPanic, testcheck.PanicElsewhere(t, func() { b.Snapshot() }))
	assert.Equal(t, zeroPanic, testcheck.PanicElsewhere(t, func() { _, _ = b.Admit() }))
}

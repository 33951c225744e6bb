package breakertest

import (
	"math"

	"pgregory.net/rapid"

	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/breaker"
)

// The harness's checks of the recovery ramp.

// rampRun is the deficit accounting the harness keeps for the offers of one
// ramp: the sum of the admitted fraction p read before each offer, and the
// admissions.
type rampRun struct {
	ramp     int
	sum      float64
	admitted int
}

// rampsStarted counts the transitions to Recovering so far: the number of the
// current (or latest) ramp.
func (h *harness) rampsStarted() int {
	n := 0
	for _, e := range *h.events {
		if e.To == breaker.Recovering {
			n++
		}
	}
	return n
}

// offered checks deficit accounting after one offer: pre is the snapshot just
// before it, and admitted is false for a refusal, and for an admission only
// shadow mode made. It returns the number of the ramp that admitted the
// attempt, or 0.
func (h *harness) offered(t *rapid.T, pre breaker.Snapshot, admitted bool) int {
	if pre.State != breaker.Recovering {
		return 0
	}
	ramp := h.rampsStarted()
	if h.ramp.ramp != ramp {
		h.ramp = rampRun{ramp: ramp}
	}
	h.ramp.sum += pre.RampFraction
	if admitted {
		h.ramp.admitted++
	}
	if d := float64(h.ramp.admitted) - math.Floor(h.ramp.sum); math.Abs(d) > 1 {
		t.Fatalf("ramp %d admitted %d attempts for a summed p of %v", ramp, h.ramp.admitted, h.ramp.sum)
	}
	if !admitted {
		return 0
	}
	return ramp
}

// rampRecorded checks what one outcome f, v may do to a ramp: the ramp starts
// only on the probe successes or a slow probe; a failure of an attempt the
// current ramp admitted never raises the admitted fraction, and re-opens the
// breaker only on Config.ConsecutiveFailures in a row.
func (h *harness) rampRecorded(t *rapid.T, pre prior, after breaker.Snapshot, f flight, v outcome.Verdict) {
	ev := *h.events
	if pre.snap.State == breaker.HalfOpen && after.State == breaker.Recovering {
		switch cause := ev[len(ev)-1].Cause; {
		case !h.m.RecoveryOn:
			t.Fatalf("a ramp without Config.Recovery")
		case cause == breaker.CauseProbesSucceeded && pre.snap.ProbeSuccesses+1-pre.snap.SlowProbes != h.m.ProbeSuccesses:
			t.Fatalf("ramp started on a lead of %d fast probes, want %d", pre.snap.ProbeSuccesses+1-pre.snap.SlowProbes, h.m.ProbeSuccesses)
		case cause == breaker.CauseProbeSlow && pre.snap.SlowProbes+1-pre.snap.ProbeSuccesses != h.m.ProbeSlowLead:
			t.Fatalf("held ramp started on a lead of %d slow probes, want %d", pre.snap.SlowProbes+1-pre.snap.ProbeSuccesses, h.m.ProbeSlowLead)
		}
	}
	if pre.snap.State != breaker.Recovering || f.ramp == 0 || f.ramp != h.rampsStarted() || !v.Failure() {
		return
	}
	if last := ev[len(ev)-1]; last.From == breaker.Recovering && (last.To != breaker.Open || last.Cause != breaker.CauseRampFailed) {
		t.Fatalf("a failure of the ramp's attempt made %v -> %v (%v)", last.From, last.To, last.Cause)
	}
	if after.State == breaker.Recovering && after.RampFraction > pre.snap.RampFraction {
		t.Fatalf("a failure of the ramp's attempt raised its fraction from %v to %v", pre.snap.RampFraction, after.RampFraction)
	}
}

// checkRampTransition checks that transition i into or out of Recovering is one
// the rules allow.
func checkRampTransition(t *rapid.T, i int, e breaker.Transition) {
	if e.To == breaker.Recovering &&
		(e.From != breaker.HalfOpen || (e.Cause != breaker.CauseProbesSucceeded && e.Cause != breaker.CauseProbeSlow)) {
		t.Fatalf("event %d: %v -> recovering (%v)", i, e.From, e.Cause)
	}
	if e.From != breaker.Recovering {
		return
	}
	switch {
	case e.To == breaker.Open && (e.Cause == breaker.CauseRampFailed || e.Cause == breaker.CauseForced):
	case e.To == breaker.Closed && (e.Cause == breaker.CauseRampDone || e.Cause == breaker.CauseReset):
	case e.To == breaker.Isolated && e.Cause == breaker.CauseIsolate:
	default:
		t.Fatalf("event %d: recovering -> %v (%v)", i, e.To, e.Cause)
	}
}

// checkRamp checks the ramp's fields in the snapshot s.
func (h *harness) checkRamp(t *rapid.T, s breaker.Snapshot) {
	if s.State != breaker.Recovering {
		if s.RampFraction != 0 || s.RampHeld || s.RampLength != 0 || !s.RampStarted.IsZero() {
			t.Fatalf("ramp fields set while %v: %+v", s.State, s)
		}
		return
	}
	m := h.m
	switch p := s.RampFraction; {
	case !m.RecoveryOn:
		t.Fatalf("recovering without Config.Recovery")
	case p >= 1:
		t.Fatalf("admitted fraction %v reads Recovering, not Closed", p)
	case p < m.RecoveryInitial:
		t.Fatalf("admitted fraction %v below Recovery.Initial %v", p, m.RecoveryInitial)
	case s.RampLength < m.RecoveryMinimum || s.RampLength > m.RecoveryMaximum:
		t.Fatalf("ramp of %v outside [%v, %v]", s.RampLength, m.RecoveryMinimum, m.RecoveryMaximum)
	}
}

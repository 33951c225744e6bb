package simulation

import (
	"time"

	"github.com/resilience-go/pipeline/policy/breaker"
)

// What the breakers' recovery ramps were doing, second by second. A process
// knows from its breaker's transitions when the breaker is Recovering; only
// then is the breaker read, with Snapshot, just before an attempt is offered
// to it. Reading a breaker never changes its later decisions (the breaker's
// TestReadsNeverChangeDecisions), so these reads leave the run as it would be.

// rampFigures reports whether a run's breakers have a ramp whose figures the
// report follows.
func rampFigures(bc *breaker.Config) bool { return bc != nil && bc.Recovery != nil }

// rampSum is one second's sums of what the ramps offered an attempt were
// admitting.
type rampSum struct {
	n              int
	fraction, held float64
}

// sampleRamp reads process p's breaker before an attempt is offered to it, if
// it is ramping, and records what it is admitting.
func (s *sim) sampleRamp(p *process) {
	if !p.ramping || !s.rampFigures {
		return
	}
	sn := p.breaker.Snapshot()
	if sn.State != breaker.Recovering {
		return // its ramp has run out: this attempt closes it
	}
	i := int(s.Now / time.Second)
	for len(s.rec.ramps) <= i {
		s.rec.ramps = append(s.rec.ramps, rampSum{})
	}
	r := &s.rec.ramps[i]
	r.n++
	r.fraction += sn.RampFraction
	if sn.RampHeld {
		r.held++
	}
}

// rampMeans fills in the seconds' Ramping and their means.
func (rec *recorder) rampMeans() {
	for i, r := range rec.ramps {
		if r.n == 0 {
			continue
		}
		s := rec.second(time.Duration(i) * time.Second)
		n := float64(r.n)
		s.Ramping = r.n
		s.RampFraction, s.RampHeld = r.fraction/n, r.held/n
	}
}

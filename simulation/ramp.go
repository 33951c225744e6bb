package simulation

import (
	"time"

	"github.com/resilience-go/pipeline/policy/breaker"
)

// What the breakers' recovery ramps were doing, second by second. A process
// knows from its breaker's transitions when the breaker is Recovering; only
// then is the breaker read, with Snapshot, just before an attempt is offered
// to it.
//
// A Snapshot reads the breaker's latency baseline, which refreshes its
// memoized median when enough samples have joined since the last refresh. The
// breaker reads the baseline itself before every sample it judges, so an
// extra read changes nothing, unless the breaker skips its own read: it does
// for a sample above a constant SlowCallThreshold, which is slow whatever the
// baseline says. With such a constant and a measured normal, a read at another
// time could change which median a later judgement uses, and so the run; the
// ramp's figures are not read then (rampFigures).

// rampFigures reports whether a run's breakers can be read for their ramp's
// figures without changing the run: they have a ramp, and not both a constant
// slow-call threshold and a measured normal latency.
func rampFigures(bc *breaker.Config) bool {
	return bc != nil && bc.Recovery != nil && (bc.SlowCallThreshold == 0 || bc.SlowCalls.Disabled)
}

// rampSum is one second's sums of what the ramps offered an attempt were
// admitting.
type rampSum struct {
	n                         int
	fraction, clock, evidence float64
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
	i := int(s.now / time.Second)
	for len(s.rec.ramps) <= i {
		s.rec.ramps = append(s.rec.ramps, rampSum{})
	}
	r := &s.rec.ramps[i]
	r.n++
	r.fraction += sn.RampFraction
	r.clock += sn.RampClock
	r.evidence += sn.RampEvidence
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
		s.RampFraction, s.RampClock, s.RampEvidence = r.fraction/n, r.clock/n, r.evidence/n
	}
}

package breakertest

import (
	"time"

	"github.com/resilience-go/pipeline/policy/breaker"
)

// modelTrickle is the probes a break lets through.
type modelTrickle struct {
	on   bool
	last time.Time
}

// admitTrickle is an admission during a trip's break: the trickle's credit
// or its longest gap, and a free slot.
func (m *model) admitTrickle(now time.Time) (modelTicket, bool) {
	if !m.trickle.on {
		return modelTicket{}, false
	}
	m.credit = min(m.credit+m.RecoveryInitial, 1)
	if m.credit < 1 && now.Sub(m.trickle.last) < m.RecoveryTrickleEvery {
		return modelTicket{}, false
	}
	t, ok := m.takeSlot(now)
	if ok {
		m.credit = 0
		m.trickle.last = now
	}
	return t, ok
}

// recordTrickle applies an outcome to an Open model: a fast success of a
// trickled probe ends the break; nothing else does.
func (m *model) recordTrickle(now time.Time, t modelTicket, success bool, d time.Duration) {
	if m.takeProbe(now, t) && success && !m.isSlowProbe(now, d) {
		m.transition(breaker.HalfOpen, breaker.CauseTrickle)
		m.probes.successes, m.probes.slow = 1, 0
		if m.probes.successes >= m.ProbeSuccesses {
			m.startRamp(now, breaker.CauseProbesSucceeded)
		}
	}
}

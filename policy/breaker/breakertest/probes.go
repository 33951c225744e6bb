package breakertest

import (
	"time"

	"github.com/resilience-go/pipeline/policy/breaker"
)

// modelProbes is the half-open phase: probe id -> expiry, the last id
// handed out, and the fast and slow successful probes.
type modelProbes struct {
	slots           map[int]time.Time
	lastID          int
	successes, slow int
}

// takeSlot gives a probe slot to an attempt at now, once the expired ones are
// freed, and reports false when every slot is held.
func (m *model) takeSlot(now time.Time) (modelTicket, bool) {
	for id, exp := range m.probes.slots {
		if !now.Before(exp) {
			delete(m.probes.slots, id)
		}
	}
	if len(m.probes.slots) >= m.Probes {
		return modelTicket{}, false
	}
	m.probes.lastID++
	life := m.breaks.nominal
	if life == 0 { // only IsolateFor has opened the model: no trip yet
		life = m.BreakDuration
	}
	m.probes.slots[m.probes.lastID] = now.Add(life)
	return modelTicket{Admitted: true, Probe: m.probes.lastID, Start: now}, true
}

// takeProbe frees the probe slot of t and reports whether it was held and
// unexpired at now.
func (m *model) takeProbe(now time.Time, t modelTicket) bool {
	exp, held := m.probes.slots[t.Probe]
	if t.Probe == 0 || !held {
		return false
	}
	delete(m.probes.slots, t.Probe)
	return now.Before(exp)
}

// recordProbe applies an outcome to a HalfOpen model.
func (m *model) recordProbe(now time.Time, t modelTicket, failure, success bool, d time.Duration) {
	if !m.takeProbe(now, t) {
		return
	}
	switch {
	case failure:
		m.trip(now, breaker.CauseProbeFailed)
	case !success:
	case m.isSlowProbe(now, d):
		// A lead of ProbeSlowLead slow probes over fast ones re-opens.
		m.probes.slow++
		if m.probes.slow-m.probes.successes < m.ProbeSlowLead {
			break
		}
		if m.RecoveryOn {
			m.startRamp(now, breaker.CauseProbeSlow)
			m.hold(now)
			break
		}
		m.trip(now, breaker.CauseProbeSlow)
	default:
		// A lead of ProbeSuccesses fast probes over slow ones closes.
		m.probes.successes++
		if m.probes.successes-m.probes.slow < m.ProbeSuccesses {
			break
		}
		if m.RecoveryOn {
			m.startRamp(now, breaker.CauseProbesSucceeded)
			break
		}
		m.transition(breaker.Closed, breaker.CauseProbesSucceeded)
		m.breaks.trips = 0
		m.breaks.recovered, m.breaks.closedAt = true, now
		m.clear()
	}
}

package breakertest

import (
	"time"

	"github.com/resilience-go/pipeline/policy/breaker"
)

// newRecovery fills in the model's recovery ramp from cfg, which is valid.
func (m *Model) newRecovery(cfg breaker.Config) {
	r := cfg.Recovery
	if r == nil {
		return
	}
	m.RecoveryOn = true
	m.RecoveryFraction, m.RecoveryInitial = r.Fraction, r.Initial
	if m.RecoveryFraction == 0 {
		m.RecoveryFraction = breaker.DefaultRecoveryFraction
	}
	if m.RecoveryInitial == 0 {
		m.RecoveryInitial = breaker.DefaultRecoveryInitial
	}
	// A zero bound is its default, unless that would contradict the other bound.
	m.RecoveryMinimum, m.RecoveryMaximum = r.Minimum, r.Maximum
	if m.RecoveryMinimum == 0 {
		m.RecoveryMinimum = breaker.DefaultRecoveryMinimum
		if r.Maximum > 0 && r.Maximum < m.RecoveryMinimum {
			m.RecoveryMinimum = r.Maximum
		}
	}
	if m.RecoveryMaximum == 0 {
		m.RecoveryMaximum = max(breaker.DefaultRecoveryMaximum, m.RecoveryMinimum)
	}
}

// startRamp moves the model from HalfOpen to Recovering at now: a ramp of
// RecoveryFraction of the break just served, within [RecoveryMinimum,
// RecoveryMaximum], with its evidence term at 1.
func (m *Model) startRamp(now time.Time, cause breaker.Cause) {
	m.transition(breaker.Recovering, cause)
	m.clear()
	m.ramps++
	m.rampStart = now
	m.rampLength = time.Duration(m.RecoveryFraction * float64(m.served))
	m.rampLength = max(m.rampLength, m.RecoveryMinimum)
	m.rampLength = min(m.rampLength, m.RecoveryMaximum)
	m.evidence, m.fastRun, m.credit = 1, 0, 0
}

// rampClock is the clock term at now: RecoveryInitial at the start of the ramp,
// rising linearly to 1 at its end (the floating-point operations are the
// breaker's, in its order, so that both admit the same attempts).
func (m *Model) rampClock(now time.Time) float64 {
	elapsed := now.Sub(m.rampStart)
	if elapsed >= m.rampLength {
		return 1
	}
	return m.RecoveryInitial + (1-m.RecoveryInitial)*float64(elapsed)/float64(m.rampLength)
}

// rampFraction is p, the fraction of offered attempts the ramp admits at now.
func (m *Model) rampFraction(now time.Time) float64 {
	return min(m.rampClock(now), m.evidence)
}

// admitRamp is an admission while Recovering.
func (m *Model) admitRamp(now time.Time) (ModelTicket, time.Duration) {
	p := m.rampFraction(now)
	if p >= 1 {
		m.closeRamp()
		return ModelTicket{Admitted: true, Start: now}, 0
	}
	m.credit += p
	if m.credit < 1 {
		return ModelTicket{}, 0 // no hint: it would aim every shed caller at one instant
	}
	m.credit--
	return ModelTicket{Admitted: true, Ramp: m.ramps, Start: now}, 0
}

// recordRamp applies an outcome while Recovering, before the ramp ran out.
func (m *Model) recordRamp(now time.Time, t ModelTicket, failure, success bool, d time.Duration) {
	if t.Ramp != m.ramps || t.Ramp == 0 {
		return // not this ramp's attempt
	}
	switch {
	case failure:
		m.trip(now, breaker.CauseRampFailed)
	case success && m.IsSlow(now, d):
		m.slowRamp(now)
	case success:
		m.fastRun++
		if m.fastRun == m.ProbeSuccesses {
			m.fastRun = 0
			m.evidence = min(1, m.evidence+m.RecoveryInitial)
		}
	}
}

// slowRamp halves the admitted fraction, not below RecoveryInitial.
func (m *Model) slowRamp(now time.Time) {
	m.evidence = max(m.RecoveryInitial, m.rampFraction(now)/2)
	m.fastRun = 0
}

// closeRamp closes a model whose ramp has run out.
func (m *Model) closeRamp() {
	m.transition(breaker.Closed, breaker.CauseRampDone)
	m.trips = 0
	m.clear()
}

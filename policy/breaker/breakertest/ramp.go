package breakertest

import (
	"time"

	"github.com/resilience-go/pipeline/internal/breakerconf"
	"github.com/resilience-go/pipeline/policy/breaker"
)

// newRecovery fills in the model's recovery ramp from cfg, which is valid.
func (m *model) newRecovery(cfg breaker.Config) {
	r := cfg.Recovery
	if r == nil {
		return
	}
	m.RecoveryOn = true
	m.RecoveryFraction, m.RecoveryInitial = r.Fraction, r.Initial
	if m.RecoveryFraction == 0 {
		m.RecoveryFraction = breakerconf.DefaultRecoveryFraction
	}
	if m.RecoveryInitial == 0 {
		m.RecoveryInitial = breakerconf.DefaultRecoveryInitial
	}
	// A zero bound is its default, unless that would contradict the other bound.
	m.RecoveryMinimum, m.RecoveryMaximum = r.Minimum, r.Maximum
	if m.RecoveryMinimum == 0 {
		m.RecoveryMinimum = breakerconf.DefaultRecoveryMinimum
		if r.Maximum > 0 && r.Maximum < m.RecoveryMinimum {
			m.RecoveryMinimum = r.Maximum
		}
	}
	if m.RecoveryMaximum == 0 {
		m.RecoveryMaximum = max(breakerconf.DefaultRecoveryMaximum, m.RecoveryMinimum)
	}
	switch {
	case r.TrickleEvery == 0:
		m.RecoveryTrickleEvery = breakerconf.DefaultTrickleEvery
	case r.TrickleEvery > 0:
		m.RecoveryTrickleEvery = r.TrickleEvery
	}
}

// startRamp moves the model from HalfOpen to Recovering at now: a ramp of
// RecoveryFraction of the time the model was open, within [RecoveryMinimum,
// RecoveryMaximum].
func (m *model) startRamp(now time.Time, cause breaker.Cause) {
	m.transition(breaker.Recovering, cause)
	m.clear()
	m.ramp.count++
	m.ramp.start, m.ramp.setBack = now, false
	m.ramp.length = time.Duration(m.RecoveryFraction * float64(now.Sub(m.breaks.openedAt)))
	m.ramp.length = max(m.ramp.length, m.RecoveryMinimum)
	m.ramp.length = min(m.ramp.length, m.RecoveryMaximum)
	m.ramp.held, m.ramp.fastRun, m.ramp.failures, m.credit = false, 0, 0, 0
}

// rampFraction is p, the fraction of offered attempts the ramp admits at now:
// RecoveryInitial at rampStart, rising linearly to 1 over rampLength, and
// standing still from heldAt while held (the floating-point operations are
// the breaker's, in its order, so that both admit the same attempts).
func (m *model) rampFraction(now time.Time) float64 {
	if m.ramp.held {
		now = m.ramp.heldAt
	}
	elapsed := now.Sub(m.ramp.start)
	if elapsed >= m.ramp.length {
		return 1
	}
	return m.RecoveryInitial + (1-m.RecoveryInitial)*float64(elapsed)/float64(m.ramp.length)
}

// admitRamp is an admission while Recovering.
func (m *model) admitRamp(now time.Time) (modelTicket, time.Duration) {
	p := m.rampFraction(now)
	if p >= 1 {
		m.closeRamp(now)
		return modelTicket{Admitted: true, Start: now}, 0
	}
	m.credit += p
	if m.credit < 1 {
		return modelTicket{}, 0 // no hint: it would aim every shed caller at one instant
	}
	m.credit--
	return modelTicket{Admitted: true, Ramp: m.ramp.count, Start: now}, 0
}

// recordRamp applies an outcome while Recovering, before the ramp ran out.
func (m *model) recordRamp(now time.Time, t modelTicket, failure, success bool, d time.Duration) {
	if t.Ramp != m.ramp.count || t.Ramp == 0 {
		return // not this ramp's attempt
	}
	switch {
	case failure:
		m.ramp.failures++
		if m.ramp.failures >= m.Consecutive {
			m.trip(now, breaker.CauseRampFailed)
			return
		}
		m.ramp.fastRun = 0
		if m.ramp.setBack && !m.ramp.round.Before(t.Start) {
			return // sent at the fraction an earlier setback corrected
		}
		p := max(m.RecoveryInitial, m.rampFraction(now)/2)
		m.ramp.held, m.ramp.setBack, m.ramp.round = false, true, now
		m.ramp.length = min(2*m.ramp.length, m.RecoveryMaximum)
		m.ramp.start = now.Add(-time.Duration((p - m.RecoveryInitial) / (1 - m.RecoveryInitial) * float64(m.ramp.length)))
	case success && m.isSlow(now, d):
		m.ramp.failures, m.ramp.fastRun = 0, 0
		m.hold(now)
	case success:
		m.ramp.failures = 0
		m.ramp.fastRun++
		if m.ramp.held && m.ramp.fastRun >= m.ProbeSuccesses {
			m.ramp.start = m.ramp.start.Add(now.Sub(m.ramp.heldAt))
			m.ramp.held = false
		}
	}
}

// hold stops the ramp at now, unless it is stopped already.
func (m *model) hold(now time.Time) {
	if !m.ramp.held {
		m.ramp.held, m.ramp.heldAt = true, now
	}
}

// closeRamp closes a model whose ramp has run out, at now.
func (m *model) closeRamp(now time.Time) {
	m.transition(breaker.Closed, breaker.CauseRampDone)
	m.breaks.trips = 0
	m.breaks.recovered, m.breaks.closedAt = true, now
	m.clear()
}

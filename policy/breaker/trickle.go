package breaker

import "time"

// The trickle: probes an open breaker lets through during its break, when
// Recovery is set, so that it learns promptly when the dependency is back
// and the dependency is never left wholly without traffic. Every helper here
// must be called with mu held.

// trickle is the trickle's state, meaningful while the breaker is Open.
type trickle struct {
	on   bool    // the break lets probes through: it is a trip's, and Recovery is set
	last instant // when the trickle last let a probe through, or the break began
}

// admitTrickle decides whether an attempt offered to an open breaker during
// its break at now goes through as a probe: the break must be a trip's, the
// trickle's credit (Recovery.Initial per offered attempt) must have reached
// one, or Recovery.TrickleEvery must have passed since the last one, and a
// probe slot must be free.
func (b *Breaker) admitTrickle(now instant) (Ticket, bool) {
	if !b.trickle.on {
		return Ticket{}, false
	}
	b.credit = min(b.credit+b.cfg.rampInitial, 1) // owed once, not once per offer a held slot refused
	if b.credit < 1 && now.Sub(b.trickle.last) < b.cfg.trickleEvery {
		return Ticket{}, false
	}
	i := b.probes.free(now)
	if i < 0 {
		return Ticket{}, false
	}
	b.credit = 0
	b.trickle.last = now
	return b.probes.take(i, now, b.probeLife()), true
}

// recordTrickle applies the outcome of a probe t, of duration d, that the
// trickle let through while the breaker is Open. A fast success ends the
// break: the breaker becomes HalfOpen with that success counted, and starts
// its ramp if that is lead enough. A failure or a slow success changes
// nothing: the break goes on, no longer than it was, and grows no more.
func (b *Breaker) recordTrickle(now instant, t Ticket, success bool, d time.Duration) {
	if !b.probes.release(now, t.id) || !success || b.isSlowProbe(now, d) {
		return
	}
	b.setState(HalfOpen)
	b.openUntil.Store(0)
	b.probes.successes, b.probes.slow = 1, 0
	b.transition(Transition{From: Open, To: HalfOpen, Cause: CauseTrickle, At: b.at(now)})
	if b.probes.successes >= b.cfg.probeSuccesses {
		b.startRamp(now, CauseProbesSucceeded)
	}
}

package breaker

import "time"

// The trickle: probes an open breaker lets through during its break, when
// Recovery is set, so that it learns promptly when the dependency is back
// and the dependency is never left wholly without traffic. Every helper here
// must be called with mu held.

// admitTrickle decides whether an attempt offered to an open breaker during
// its break at now goes through as a probe: the break must be a trip's, the
// trickle's credit (Recovery.Initial per offered attempt) must have reached
// one, or Recovery.TrickleEvery must have passed since the last one, and a
// probe slot must be free.
func (b *Breaker) admitTrickle(now instant) (Ticket, bool) {
	if !b.trickling {
		return Ticket{}, false
	}
	b.credit = min(b.credit+b.cfg.rampInitial, 1) // owed once, not once per offer a held slot refused
	if b.credit < 1 && now.Sub(b.lastTrickle) < b.cfg.trickleEvery {
		return Ticket{}, false
	}
	i := b.freeSlot(now)
	if i < 0 {
		return Ticket{}, false
	}
	b.credit = 0
	b.lastTrickle = now
	return b.takeSlot(i, now), true
}

// recordTrickle applies the outcome of a probe t, of duration d, that the
// trickle let through while the breaker is Open. A fast success ends the
// break: the breaker becomes HalfOpen with that success counted, and starts
// its ramp if that is lead enough. A failure or a slow success changes
// nothing: the break goes on, no longer than it was, and grows no more.
func (b *Breaker) recordTrickle(now instant, t Ticket, success bool, d time.Duration) {
	if !b.releaseProbe(now, t.id) || !success || b.isSlowProbe(now, d) {
		return
	}
	b.setState(HalfOpen)
	b.openUntil.Store(0)
	b.successes, b.slowProbes = 1, 0
	b.transition(Transition{From: Open, To: HalfOpen, Cause: CauseTrickle, At: b.at(now)})
	if b.successes >= b.cfg.probeSuccesses {
		b.startRamp(now, CauseProbesSucceeded)
	}
}

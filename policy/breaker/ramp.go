package breaker

import "time"

// rampTicket marks the id of a Ticket the recovery ramp admitted; the low bits
// number the ramp, so that an outcome from an earlier ramp (a straggler) is told
// from one of the current ramp.
const rampTicket = 1 << 63

// The ramp at work. Every helper here must be called with mu held.

// startRamp moves a half-open breaker to Recovering at now. The ramp's length is
// derived from the break just served; its evidence term starts at 1, so that the
// clock alone paces a healthy recovery. The trip window, failure run and probes
// are cleared; the break growth is kept until the ramp closes the breaker.
func (b *Breaker) startRamp(now instant, cause Cause) {
	b.state = Recovering
	b.clearEvidence()
	b.ramps++
	b.rampStart = now
	length := time.Duration(b.cfg.rampFraction * float64(b.served))
	b.rampLength = min(max(length, b.cfg.rampMin), b.cfg.rampMax)
	b.evidence, b.fastRun, b.credit = 1, 0, 0
	b.transition(Transition{From: HalfOpen, To: Recovering, Cause: cause, At: b.at(now)})
}

// rampClock returns the clock term at now: Initial at the ramp's start, rising
// linearly to exactly 1 at its end. The model in breakertest computes it with
// the same floating-point operations, in the same order.
func (b *Breaker) rampClock(now instant) float64 {
	elapsed := now.Sub(b.rampStart)
	if elapsed >= b.rampLength {
		return 1
	}
	initial := b.cfg.rampInitial
	return initial + (1-initial)*float64(elapsed)/float64(b.rampLength)
}

// rampFraction returns p, the fraction of offered attempts the ramp admits at now.
// At 1 the ramp has run out: the breaker reads Closed, and the next admission
// or outcome closes it.
func (b *Breaker) rampFraction(now instant) float64 {
	return min(b.rampClock(now), b.evidence)
}

// admitRamp decides an admission while Recovering: deficit accounting at p.
// A refusal carries no retry-after hint. The ramp admits a growing share of
// the calls at every moment, so no instant is better to come back at than
// another, and a hint would send every caller it shed back at the same one:
// the cliff the ramp exists to avoid. A caller paces itself (a retry stage's
// jittered backoff).
func (b *Breaker) admitRamp(now instant) (Ticket, time.Duration, bool) {
	p := b.rampFraction(now)
	if p >= 1 {
		b.finishRamp(now)
		return Ticket{start: now, id: ordinary}, 0, true
	}
	b.credit += p
	if b.credit >= 1 {
		b.credit--
		return Ticket{start: now, id: rampTicket | b.ramps}, 0, true
	}
	b.reject(Recovering, 0, now)
	return Ticket{}, 0, false
}

// recordRamp applies the outcome of an attempt t, of duration d, while
// Recovering, and reports whether it is done with it: false when the ramp had
// run out, so that the breaker is now Closed and the outcome is a closed-state
// sample. Only attempts of the current ramp count: a failure re-opens the breaker
// with the grown break, a slow success halves the admitted fraction (not below
// Initial), and Config.ProbeSuccesses fast successes in a row raise the evidence
// term by Initial. Nothing here feeds the trip window or the baselines.
func (b *Breaker) recordRamp(now instant, t Ticket, failure, success bool, d time.Duration) bool {
	if b.rampFraction(now) >= 1 {
		b.finishRamp(now)
		return false
	}
	switch {
	case t.id != rampTicket|b.ramps:
		// A straggler admitted before the breaker opened, an attempt of an earlier
		// ramp, or a probe still in flight when this ramp began.
	case failure:
		b.trip(now, CauseRampFailed)
	case !success:
		// Not evidence: it neither slows the ramp nor ends a run of fast calls.
	case b.isSlow(now, d):
		b.slowRamp(now)
	default:
		b.fastRun++
		if b.fastRun >= b.cfg.probeSuccesses {
			b.fastRun = 0
			b.evidence = min(1, b.evidence+b.cfg.rampInitial)
		}
	}
	return true
}

// slowRamp applies one slow call: the admitted fraction is halved, not below
// Initial, and held there by the evidence term; the run of fast calls ends.
func (b *Breaker) slowRamp(now instant) {
	b.evidence = max(b.cfg.rampInitial, b.rampFraction(now)/2)
	b.fastRun = 0
}

// finishRamp closes a breaker whose ramp has run out: the recovery is complete,
// so the break growth starts over.
func (b *Breaker) finishRamp(now instant) {
	b.state = Closed
	b.trips = 0
	b.clearEvidence()
	b.transition(Transition{From: Recovering, To: Closed, Cause: CauseRampDone, At: b.at(now)})
}

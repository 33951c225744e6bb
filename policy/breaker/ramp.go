package breaker

import (
	"time"

	"github.com/resilience-go/pipeline/criticality"
)

// rampTicket marks the id of a Ticket the recovery ramp admitted; the low bits
// number the ramp, so that an outcome from an earlier ramp (a straggler) is told
// from one of the current ramp.
const rampTicket = 1 << 63

// ramp is the recovery ramp's state, meaningful while the breaker is
// Recovering.
type ramp struct {
	count    uint64        // ramps started so far; the current ramp's tickets carry it
	start    instant       // when p would have been Initial, had the ramp climbed unheld and unset back
	length   time.Duration // how long p takes to climb from Initial to 1
	setBack  bool          // the ramp has been set back
	round    instant       // its latest setback: failures admitted until then cause none
	held     bool          // slow calls hold p where it stood at heldAt
	heldAt   instant       // when the ramp was held
	fastRun  int           // fast successes in a row
	failures int           // failures in a row
}

// The ramp at work. Every helper here must be called with mu held.

// startRamp moves a half-open breaker to Recovering at now. The ramp's length is
// derived from how long the breaker was open (the break served, or less when
// the trickle ended it early). The trip window, failure run and probes are
// cleared; the break growth is kept until the ramp closes the breaker.
func (b *Breaker) startRamp(now instant, cause Cause) {
	b.setState(Recovering)
	b.clearEvidence()
	length := time.Duration(b.cfg.rampFraction * float64(now.Sub(b.breaks.openedAt)))
	b.ramp = ramp{count: b.ramp.count + 1, start: now, length: min(max(length, b.cfg.rampMin), b.cfg.rampMax)}
	b.credit = 0
	b.transition(Transition{From: HalfOpen, To: Recovering, Cause: cause, At: b.at(now)})
}

// rampFraction returns p, the fraction of offered attempts the ramp admits at
// now: Initial at the ramp's start, rising linearly to exactly 1 at its end,
// and standing still while the ramp is held. At 1 the ramp has run out: the
// breaker reads Closed, and the next admission or outcome closes it. The model
// in breakertest computes it with the same floating-point operations, in the
// same order.
func (b *Breaker) rampFraction(now instant) float64 {
	if b.ramp.held {
		now = b.ramp.heldAt
	}
	elapsed := now.Sub(b.ramp.start)
	if elapsed >= b.ramp.length {
		return 1
	}
	initial := b.cfg.rampInitial
	return initial + (1-initial)*float64(elapsed)/float64(b.ramp.length)
}

// rampNeed is the credit a call of each level needs to be admitted by the
// ramp, by level: a Critical call may run the credit one call into debt, a
// Sheddable one waits for a call's credit saved beyond a Default one's. So
// the ramp admits the same share p of the calls offered (the debt is at
// most one call, the savings at most two), Critical calls first: while they
// are fewer than p of the calls, every one is admitted. An unmarked call is
// Default, which needs the one call's credit the ramp always needed.
var rampNeed = [criticality.Levels]float64{2, 1, 0}

// admitRamp decides an admission while Recovering of a call of level l:
// deficit accounting at p, with the credit l needs (rampNeed).
// A refusal carries no retry-after hint. The ramp admits a growing share of
// the calls at every moment, so no instant is better to come back at than
// another, and a hint would send every caller it shed back at the same one:
// the cliff the ramp exists to avoid. A caller paces itself (a retry stage's
// jittered backoff).
func (b *Breaker) admitRamp(now instant, l criticality.Level) (Ticket, time.Duration, bool) {
	p := b.rampFraction(now)
	if p >= 1 {
		b.finishRamp(now)
		return Ticket{start: now, id: ordinary}, 0, true
	}
	b.credit += p
	if !l.Valid() {
		l = criticality.Default
	}
	if b.credit >= rampNeed[l-1] {
		b.credit--
		return Ticket{start: now, id: rampTicket | b.ramp.count}, 0, true
	}
	b.reject(Recovering, 0, now)
	return Ticket{}, 0, false
}

// recordRamp applies the outcome of an attempt t, of duration d, while
// Recovering, and reports whether it is done with it: false when the ramp had
// run out, so that the breaker is now Closed and the outcome is a closed-state
// sample. Only attempts of the current ramp count. A failure is a setback, and
// Config.ConsecutiveFailures of them in a row re-open the breaker with the
// grown break; a slow success holds the ramp, and Config.ProbeSuccesses fast
// successes in a row release it. Nothing here feeds the trip window or the
// baselines.
func (b *Breaker) recordRamp(now instant, t Ticket, failure, success bool, d time.Duration) bool {
	if b.rampFraction(now) >= 1 {
		b.finishRamp(now)
		return false
	}
	switch {
	case t.id != rampTicket|b.ramp.count:
		// A straggler admitted before the breaker opened, an attempt of an earlier
		// ramp, or a probe still in flight when this ramp began.
	case failure:
		if b.ramp.failures++; b.ramp.failures >= b.cfg.consecutive {
			b.trip(now, CauseRampFailed)
			break
		}
		b.ramp.fastRun = 0
		if !b.ramp.setBack || b.ramp.round.Before(t.start) {
			b.setback(now)
		}
	case !success:
		// Not evidence: it neither moves the ramp nor ends a run of fast calls.
	case b.isSlow(now, d):
		b.ramp.failures, b.ramp.fastRun = 0, 0
		b.hold(now)
	default:
		b.ramp.failures = 0
		if b.ramp.fastRun++; b.ramp.held && b.ramp.fastRun >= b.cfg.probeSuccesses {
			b.ramp.start = b.ramp.start.Add(now.Sub(b.ramp.heldAt))
			b.ramp.held = false
		}
	}
	return true
}

// hold stops the ramp's clock at now, if it is not stopped already: a slow
// call says the dependency is up and not ready for more.
func (b *Breaker) hold(now instant) {
	if !b.ramp.held {
		b.ramp.held, b.ramp.heldAt = true, now
	}
}

// setback applies a failed attempt admitted since the last setback: the
// admitted fraction p halves (not below Initial) and the ramp's length doubles
// (not beyond Maximum), so that p climbs again from its half, more slowly. The
// attempts admitted until then, at the old fraction, can cause no further
// setback: they are one round, as a congestion window is. A held ramp is released: the
// halving is the stronger answer.
func (b *Breaker) setback(now instant) {
	p := max(b.cfg.rampInitial, b.rampFraction(now)/2)
	b.ramp.held = false
	b.ramp.setBack, b.ramp.round = true, now
	b.ramp.length = min(2*b.ramp.length, b.cfg.rampMax)
	initial := b.cfg.rampInitial
	b.ramp.start = now.Add(-time.Duration((p - initial) / (1 - initial) * float64(b.ramp.length)))
}

// finishRamp closes a breaker whose ramp has run out: the recovery is complete,
// so the break growth starts over.
func (b *Breaker) finishRamp(now instant) {
	b.setState(Closed)
	b.breaks.recovered, b.breaks.closedAt = true, now
	b.breaks.trips = 0
	b.clearEvidence()
	b.transition(Transition{From: Recovering, To: Closed, Cause: CauseRampDone, At: b.at(now)})
}

package breaker

import (
	"fmt"
	"time"
)

// State returns the breaker's state as of now on its clock. Reading it never
// changes anything: an Open breaker whose break has elapsed reads HalfOpen, but
// stays Open until an attempt is admitted, so a health check never takes a probe
// slot; and a Recovering breaker whose ramp has run out (its admitted fraction
// has reached 1) reads Closed, and is closed by the next admission or outcome.
func (b *Breaker) State() State {
	now := b.now()
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.stateAt(b.clamp(now))
}

// clamp is observe without the update, for readers. Call it with mu held.
func (b *Breaker) clamp(now instant) instant {
	if now.Before(b.last) {
		return b.last
	}
	return now
}

// stateAt is the state a reader sees at now. Call it with mu held.
func (b *Breaker) stateAt(now instant) State {
	switch {
	case b.state == Open && !now.Before(b.breaks.until):
		return HalfOpen
	case b.state == Recovering && b.rampFraction(now) >= 1:
		return Closed
	}
	return b.state
}

// Snapshot is a consistent reading of a breaker's state, for health endpoints,
// tests and the reference model in package breakertest.
type Snapshot struct {
	// State is what [Breaker.State] would return.
	State State
	// ConsecutiveFailures is the current run of failures while Closed.
	ConsecutiveFailures int
	// Trips counts the trips since the breaker last closed; it sets the growth of
	// the next break. A recovery ramp keeps it until the ramp closes the
	// breaker; Reset zeroes it.
	Trips int
	// Nominal is the latest trip's break before jitter (grown and capped), and
	// Break the latest break actually served, a trip's or IsolateFor's; both
	// are 0 before the first trip or IsolateFor and after Reset. IsolateFor
	// leaves Nominal alone, since it is not a trip.
	Nominal, Break time.Duration
	// BreakEnds is when the latest break ends (the zero time if there is none).
	BreakEnds time.Time
	// Probes is the number of probe slots held and not yet expired.
	Probes int
	// ProbeSuccesses counts the fast successful probes of the current half-open
	// phase, and SlowProbes its slow ones: the phase ends when the fast ones
	// lead by Config.ProbeSuccesses or the slow ones by Config.ProbeSlowLead.
	ProbeSuccesses, SlowProbes int

	// RampFraction is the fraction of offered attempts the recovery ramp is
	// admitting, below 1, RampLength how long it takes to climb from
	// Recovery.Initial to 1, and RampStarted when it would have stood at
	// Initial had it never been held or set back (see [Recovery]): a
	// RampStarted moving later and a RampLength growing mean slow calls and
	// failures are holding the ramp back, and a ramp running for much longer
	// than its length is worth an alert. RampHeld reports that slow calls
	// hold it now. All are zero unless State is Recovering.
	RampStarted  time.Time
	RampLength   time.Duration
	RampFraction float64
	RampHeld     bool

	// NormalLatency and NormalLatencyOK are what [Breaker.NormalLatency]
	// returns; NormalLatency is 0 when NormalLatencyOK is false.
	NormalLatency   time.Duration
	NormalLatencyOK bool
	// NormalLatencyHeld is how much history the measured normal latency holds:
	// from the oldest success in its window to now, at most SlowCalls.Window.
	// A breaker up for less than the window holds only as much as it has been
	// up. Its normal holds out against a brownout for about SlowCalls.Quantile
	// × NormalLatencyHeld, and NormalLatencyHoldsOut says whether that is at
	// least twice the SlowCallRatio × TripWindow of slow calls a slow-call trip
	// needs: the race that Config.Validate checks for a full window, judged on
	// what the breaker actually holds. A young breaker (a minute at the
	// defaults) that has not won it yet would follow a brownout before
	// tripping on it.
	NormalLatencyHeld     time.Duration
	NormalLatencyHoldsOut bool
	// NormalFailureRate and NormalFailureRateOK are what
	// [Breaker.NormalFailureRate] returns; NormalFailureRate is 0 when
	// NormalFailureRateOK is false.
	NormalFailureRate   float64
	NormalFailureRateOK bool
	// SlowCallThreshold is the effective slow-call threshold: an attempt that
	// takes longer is slow. It is the smaller of Config.SlowCallThreshold and
	// SlowCalls.Multiple × NormalLatency (at least 1 ns) of those that are set
	// and armed, and 0 when neither is: then no attempt is slow.
	SlowCallThreshold time.Duration
	// FailureTripPoint is the effective trip point of the failure-ratio trips:
	// the relative point of Config.Failures when its baseline is armed (never
	// above Config.FailureRatio), else Config.FailureRatio, else 0 (no ratio trip
	// on failures is armed).
	FailureTripPoint float64

	// Shadow reports whether the breaker is in shadow mode (see Config.Shadow).
	// The other fields then describe the hypothetical breaker: State may read
	// Open while every attempt is admitted.
	Shadow bool
}

// Snapshot reads the breaker's state without changing it.
func (b *Breaker) Snapshot() Snapshot {
	now := b.now()
	b.mu.Lock()
	defer b.mu.Unlock()
	now = b.clamp(now)
	s := Snapshot{
		State:               b.stateAt(now),
		ConsecutiveFailures: b.evidence.failures,
		Trips:               b.breaks.trips,
		Nominal:             b.breaks.nominal,
		Break:               b.breaks.served,
		ProbeSuccesses:      b.probes.successes,
		SlowProbes:          b.probes.slow,
		Shadow:              b.shadow.Load(),
	}
	if b.breaks.nominal > 0 || b.breaks.served > 0 { // a trip, or IsolateFor, set a break
		s.BreakEnds = b.at(b.breaks.until)
	}
	switch {
	case s.State == Recovering:
		s.RampStarted, s.RampLength = b.at(b.ramp.start), b.ramp.length
		s.RampFraction, s.RampHeld = b.rampFraction(now), b.ramp.held
	case b.state == Recovering: // the ramp has run out: read what closing it leaves
		s.Trips = 0
	}
	s.NormalLatency, s.NormalLatencyOK = b.normalLatency(now)
	if !s.NormalLatencyOK {
		s.NormalLatency = 0
	}
	if b.normal.latencies != nil {
		s.NormalLatencyHeld = b.normal.latencies.Held(time.Duration(now))
		s.NormalLatencyHoldsOut = s.NormalLatencyOK &&
			b.cfg.slowQ*float64(s.NormalLatencyHeld) >= 2*b.cfg.slowRatio*float64(b.cfg.tripWindow)
	}
	s.NormalFailureRate, s.NormalFailureRateOK = b.normalFailureRate(now)
	s.SlowCallThreshold, _ = b.slowLimit(now)
	s.FailureTripPoint = b.failurePoint(now)
	if b.state == HalfOpen || b.state == Open { // the trickle's probes hold slots too
		for _, sl := range b.probes.slots {
			if sl.id != 0 && now.Before(sl.expires) {
				s.Probes++
			}
		}
	}
	return s
}

// Isolate opens the breaker until [Breaker.Reset], whatever its state (a
// recovery ramp included): every attempt is refused with a zero retry-after
// hint, outcomes of attempts already in flight are ignored, and no break ever
// ends it. Like a trip, it clears the trip window and keeps the measured normals.
// [Breaker.IsolateFor] opens it for a given time instead.
func (b *Breaker) Isolate() {
	now := b.now()
	b.mu.Lock()
	now = b.observe(now)
	if b.state != Isolated {
		from := b.state
		b.setState(Isolated)
		b.openUntil.Store(0)
		b.clearEvidence()
		b.transition(Transition{From: from, To: Isolated, Cause: CauseIsolate, At: b.at(now)})
	}
	queued := len(b.outbox.queue) > 0
	b.mu.Unlock()
	if queued {
		b.flush()
	}
}

// IsolateFor opens the breaker for exactly d, whatever its state (a recovery
// ramp or Isolate included): the state is Open, its break is d with no
// jitter, and, as after any break, the first attempt after it makes the
// breaker HalfOpen and becomes a probe. It raises a Transition with Cause
// CauseForced and Break d, even from Open, whose break it replaces, longer or
// shorter. It is not a trip: the count of trips, and with it the growth of the
// next break, is left as it was. Like a trip, it clears the trip window and
// keeps the measured normals. Use it to give a dependency a known rest, such as
// a maintenance window; [Breaker.Isolate] rests it until Reset.
//
// IsolateFor panics if d is not positive or is above MaxDuration: a break of
// no time, or one whose end could overflow the breaker's clock, is a mistake
// in the calling code, as a nil breaker given to Guard is.
func (b *Breaker) IsolateFor(d time.Duration) {
	now := b.now()
	if d <= 0 || d > MaxDuration {
		panic(fmt.Sprintf("breaker: IsolateFor: the duration must lie in (0, MaxDuration], got %v", d))
	}
	b.mu.Lock()
	now = b.observe(now)
	if b.state == Recovering && b.rampFraction(now) >= 1 {
		b.finishRamp(now) // it reads Closed, and the break growth it lost with it
	}
	from := b.state
	b.setState(Open)
	b.trickle.on = false // an operator's break: nothing goes through
	b.breaks.openedAt = now
	b.breaks.served = d
	b.breaks.until = now.Add(d)
	b.openUntil.Store(int64(b.breaks.until))
	b.clearEvidence()
	b.transition(Transition{From: from, To: Open, Cause: CauseForced, Break: d, At: b.at(now)})
	queued := len(b.outbox.queue) > 0
	b.mu.Unlock()
	if queued {
		b.flush()
	}
}

// probeLife is how long a probe slot is held before it expires: the nominal
// break of the latest trip, or, when a break from IsolateFor came before any
// trip, Config.BreakDuration, the break the first trip would serve. Call it
// with mu held.
func (b *Breaker) probeLife() time.Duration {
	if b.breaks.nominal > 0 {
		return b.breaks.nominal
	}
	return b.cfg.breakDuration
}

// Reset closes the breaker, whatever its state, clears its trip window and
// failure run, and zeroes the break growth, so the next trip breaks for
// Config.BreakDuration. A recovery ramp in progress ends without one. It leaves
// the measured normals (latency and failure rate) alone: they describe the
// dependency, not a decision about it. A probe, or an attempt a ramp admitted,
// still in flight when Reset is called lands in a Closed breaker and counts as
// an ordinary closed-state sample.
func (b *Breaker) Reset() {
	now := b.now()
	b.mu.Lock()
	now = b.observe(now)
	from := b.state
	b.setState(Closed)
	b.openUntil.Store(0)
	b.breaks.trips, b.breaks.recovered = 0, false
	b.breaks.nominal, b.breaks.served, b.breaks.until = 0, 0, 0
	b.clearEvidence()
	if from != Closed {
		b.transition(Transition{From: from, To: Closed, Cause: CauseReset, At: b.at(now)})
	}
	queued := len(b.outbox.queue) > 0
	b.mu.Unlock()
	if queued {
		b.flush()
	}
}

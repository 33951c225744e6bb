package breaker

import "time"

// evidence is what trips a Closed breaker: the run of consecutive failures,
// the trip window of the ratio trips and the failure baseline of the
// relative one.
type evidence struct {
	failures int     // consecutive failures while Closed
	window   *window // trip window; nil unless a ratio trip is configured
	baseline *window // failure baseline: evidence while Closed; nil if the relative trip is off
}

// reset forgets the failure run and the trip window; the baseline, which
// measures what is normal, is kept.
func (e *evidence) reset() {
	e.failures = 0
	if e.window != nil {
		e.window.reset()
	}
}

// recordClosed applies the outcome of an attempt to a Closed breaker (or to a
// Recovering one, for an outcome the ramp leaves to it): the sample is judged
// against the normal latency as it stood before it, then joins the
// baselines and the trip window, and the trips are evaluated, first match
// wins. Call it with mu held.
func (b *Breaker) recordClosed(now instant, failure, success bool, d time.Duration) {
	if !failure && !success {
		return
	}
	e := &b.evidence
	slow := b.isSlow(now, d)
	if failure {
		e.failures++
	} else {
		e.failures = 0
		if b.normal.latencies != nil && d != untimed {
			b.normal.latencies.Add(time.Duration(now), d)
		}
	}
	if e.baseline != nil {
		e.baseline.add(now, failure, false)
	}
	if e.window == nil {
		if e.failures >= b.cfg.consecutive {
			b.trip(now, CauseConsecutiveFailures)
		}
		return
	}
	e.window.add(now, failure, slow)
	w := &e.window.total
	switch {
	case e.failures >= b.cfg.consecutive:
		b.trip(now, CauseConsecutiveFailures)
	case w.calls < b.cfg.minimumCalls:
	case b.cfg.failureRatio > 0 && ratio(w.failures, w.calls) >= b.cfg.failureRatio:
		b.trip(now, CauseFailureRatio)
	case w.failures >= 2 && b.relativeTrips(*w):
		b.trip(now, CauseRelativeFailureRatio)
	case w.slow > 0 && ratio(w.slow, w.calls) >= b.cfg.slowRatio:
		b.trip(now, CauseSlowCalls)
	}
}

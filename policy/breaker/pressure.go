package breaker

// Pressure reports how close the breaker is to opening on failures, as of now on
// its clock: 0 with no failure evidence, 1 at a trip point. It is the largest of
// the current run of consecutive failures over Config.ConsecutiveFailures and,
// when the trip window holds at least MinimumCalls samples, the window's failure
// ratio over Config.FailureRatio (if set) and over the relative trip point of
// Config.Failures (if its baseline is armed). The relative point is never above
// FailureRatio, so with both it is the one that counts, with the relative
// trip's own rule: it counts only once the window holds two failures, since one
// failure can never trip it (against a quiet dependency, one failure in 20
// calls would otherwise read as full pressure and stop hedging). A breaker that does not read Closed
// reads 1: it has tripped, or has not yet shown it recovered. That includes a
// Recovering breaker, whose ramp is admitting a fraction of the traffic on
// purpose, so the hedge must not add load to it, and one whose ramp has run
// out but that no attempt has closed yet. A breaker that closed on its own
// after a trip (its probes or its ramp succeeded) has shown the dependency
// can serve again, not yet that it can serve all of it: for a trip window
// after closing it reads at least 1 - (time since closing) / TripWindow, so
// that hedging resumes only half a trip window (15 s) after a recovery. Added
// at that moment, when the dependency has just taken the whole load back,
// hedges tip it over again (docs/breaker.md, "After a recovery").
//
// The hedge stage sends a hedged attempt only while Pressure is below one half,
// so that hedging never adds load to a dependency that is near its trip point.
// Pressure is truthful in shadow mode too (it reads the hypothetical breaker),
// and the hedge ignores it there (see [Breaker.Shadow]). Reading Pressure never
// changes the breaker.
func (b *Breaker) Pressure() float64 {
	now := b.now()
	b.mu.Lock()
	defer b.mu.Unlock()
	now = b.clamp(now)
	if b.state != Closed {
		return 1
	}
	p := float64(b.evidence.failures) / float64(b.cfg.consecutive)
	if b.breaks.recovered {
		if since := now.Sub(b.breaks.closedAt); since < b.cfg.tripWindow {
			p = max(p, 1-float64(since)/float64(b.cfg.tripWindow))
		}
	}
	if b.evidence.window != nil {
		if w := b.evidence.window.at(now); w.calls >= b.cfg.minimumCalls {
			point := b.failurePoint(now)
			if w.failures < 2 && point != b.cfg.failureRatio {
				point = b.cfg.failureRatio // the relative trip needs two failures
			}
			if point > 0 {
				p = max(p, ratio(w.failures, w.calls)/point)
			}
		}
	}
	return min(p, 1)
}

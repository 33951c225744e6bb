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
// purpose, so the hedge must not add load to it; once the ramp has run out the
// breaker reads Closed and its (cleared) window reads 0.
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
	if b.stateAt(now) != Closed {
		return 1
	}
	p := float64(b.failures) / float64(b.cfg.consecutive)
	if b.window != nil {
		if w := b.window.at(now); w.calls >= b.cfg.minimumCalls {
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

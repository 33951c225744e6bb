package adaptive

import (
	"fmt"
	"time"
)

// Why says what a revision of the limit found.
type Why uint8

const (
	// Held: nothing to do. The recent latency is within Tolerance of the
	// baseline and the calls used less than half the limit, or an interval
	// lacked samples.
	Held Why = iota
	// Grew: the recent latency is within Tolerance of the baseline and the
	// calls used at least half the limit: it grew by its square root.
	Grew
	// Queued: the recent latency exceeded Tolerance times the baseline, a
	// sign that calls wait behind each other: the limit was cut in the
	// proportion baseline/recent, by a fifth to a half.
	Queued
	// Slower: the latency that made the last cut did not come down after it,
	// so the dependency is slower on its own, not queued: the limit is held
	// and the recent latency is taken as the baseline until the estimator
	// catches up or the dependency is fast again.
	Slower
	// Throttled: the dependency throttled calls of the interval (a
	// non-self-imposed Throttled verdict, such as a 429): the limit was cut by
	// a fifth.
	Throttled
)

// String returns the finding in words.
func (w Why) String() string {
	switch w {
	case Held:
		return "held"
	case Grew:
		return "grew"
	case Queued:
		return "queued"
	case Slower:
		return "slower"
	case Throttled:
		return "throttled"
	}
	return fmt.Sprintf("adaptive.Why(%d)", uint8(w))
}

// Revision is one revision of the limit. A stage emits it as an event when
// the limit moves or the baseline changes (Why is Slower); [Limiter.Snapshot]
// reports the latest.
type Revision struct {
	// At is when the revision happened, on the estimator's clock
	// (latency.Estimator.Now).
	At time.Duration
	// From and To are the limit before and after.
	From, To int
	// Recent is the interval's latency quantile (Config.Quantile) over its
	// answers, successes and failures alike, and
	// Baseline what it was compared with: the estimator's quantile over its
	// window, or the slower baseline the rule accepted.
	Recent, Baseline time.Duration
	// Peak is the most calls inside at once during the interval, and Queued
	// how many wait for a slot as the revision is made.
	Peak, Queued int
	// Throttled counts the interval's calls the dependency throttled.
	Throttled int
	// Why says what the revision found.
	Why Why
}

// Name returns "adaptive.revised".
func (Revision) Name() string { return "adaptive.revised" }

// revise revises the limit at now, the first time seen at or after the end of
// the interval, and starts the next interval. It reports whether the
// revision moved the limit or the baseline. mu must be held.
//
// The rule, in the order it is applied:
//
//  1. An interval whose calls the dependency throttled cuts the limit by a
//     fifth.
//  2. Without MinSamples answers in the interval just ended, and successes
//     in the estimator's window, nothing changes.
//  3. A slower baseline accepted earlier replaces the estimator's until the
//     recent quantile is under it by more than Tolerance: the dependency is
//     fast again. (The estimator's window fills with the slower latency too,
//     but queued calls along with it; the accepted baseline was measured
//     with the queue drained.)
//  4. A recent quantile above Tolerance times the baseline means a queue,
//     unless the previous revision cut the limit and the quantile did not
//     fall below 0.9 times the one that made that cut: then the dependency
//     is slower on its own, and the recent quantile becomes the baseline
//     (Slower). Otherwise the limit is cut to limit × baseline / recent,
//     keeping between half and four fifths of it (Queued).
//  5. Otherwise, if the calls used at least half the limit, it grows by its
//     square root (Grew): a limit that is not used proves nothing.
func (l *Limiter) revise(now time.Duration) (r Revision, moved bool) {
	finished := l.next - l.interval // the interval that just ended
	l.next = l.boundary(now)
	from := int(l.limit)
	r = Revision{At: now, From: from, Peak: int(l.peak.Swap(int64(l.slots.InFlight()))), Queued: l.slots.Queued(), Throttled: l.throttled}
	l.throttled = 0
	wasCut := l.cut
	l.cut = false
	defer func() { r.To = int(l.limit); l.last = r }()

	if r.Throttled > 0 {
		l.setLimit(l.limit * throttleCut)
		r.Why = Throttled
		return r, true
	}
	var n int
	if l.seen >= finished { // samples of the interval that just ended
		r.Recent, n = l.recent.Quantile(l.seen, l.quantile)
	}
	baseline, m := l.est.Quantile(now, l.quantile)
	if median, _ := l.est.Quantile(now, 0.5); median > 0 {
		l.hint.Store(int64(median))
	}
	r.Baseline = baseline
	if n < l.minSamples || m < l.minSamples {
		return r, false
	}
	if l.floor > 0 {
		if float64(r.Recent)*l.tolerance < float64(l.floor) {
			l.floor = 0 // the dependency is fast again
		} else {
			r.Baseline = l.floor
		}
	}
	switch {
	case float64(r.Recent) > l.tolerance*float64(r.Baseline):
		if wasCut && float64(r.Recent) >= fruitless*float64(l.cutAt) {
			l.floor = r.Recent
			r.Why, r.Baseline = Slower, r.Recent
			return r, true
		}
		ratio := float64(r.Baseline) / float64(r.Recent)
		l.setLimit(l.limit * min(max(ratio, deepestCut), shallowCut))
		l.cut, l.cutAt = true, r.Recent
		r.Why = Queued
	case float64(r.Peak) >= l.limit/2:
		l.setLimit(l.limit + sqrt(l.limit))
		r.Why = Grew
	}
	return r, int(l.limit) != from
}

// Snapshot is a consistent reading of a limiter's state, for health checks,
// dashboards and the simulation.
type Snapshot struct {
	// Limit is how many calls may be inside at once, InFlight how many are,
	// and Queued how many wait for a slot.
	Limit, InFlight, Queued int
	// Floor is the slower baseline the rule accepted (see [Slower]), 0 if
	// none.
	Floor time.Duration
	// Last is the latest revision; its At is 0 before the first.
	Last Revision
}

// Snapshot returns the limiter's state. It changes nothing.
func (l *Limiter) Snapshot() Snapshot {
	l.mu.Lock()
	defer l.mu.Unlock()
	return Snapshot{Limit: int(l.limit), InFlight: l.slots.InFlight(), Queued: l.slots.Queued(), Floor: l.floor, Last: l.last}
}

package breaker

import (
	"math"
	"time"

	"github.com/resilience-go/pipeline/internal/histogram"
)

// normal is the measured normal latency: the latency baseline (successes
// while Closed; nil if SlowCalls is disabled) and the slow-call threshold it
// last scaled to, a cache: scaled is SlowCalls.Multiple × scaledFrom, the
// last normal isSlow read (scaledFrom starts at -1, no normal).
type normal struct {
	latencies          *histogram.Window
	scaledFrom, scaled time.Duration
}

// The measured normals at work. Every helper here must be called with mu held.

// ratio returns n / of; of must be positive.
func ratio(n, of int) float64 { return float64(n) / float64(of) }

// isSlow reports whether an attempt of duration d, ending at now, is slow: longer
// than the effective slow-call threshold. It is the breaker's judgement of
// slowness for the slow-call trip and the recovery ramp; isSlowProbe is the
// probes'.
func (b *Breaker) isSlow(now instant, d time.Duration) bool {
	c := b.threshold(now)
	return c > 0 && d > c
}

// isSlowProbe reports whether a probe of duration d, ending at now, is slow:
// longer than Config.ProbeSlowFraction of the effective slow-call threshold.
func (b *Breaker) isSlowProbe(now instant, d time.Duration) bool {
	c := b.threshold(now)
	if c > 0 && b.cfg.probeFraction < 1 {
		c = scale(c, b.cfg.probeFraction)
	}
	return c > 0 && d > c
}

// threshold returns the effective slow-call threshold at now, or 0 when none is
// set or armed. It is slowLimit written for the path of every attempt: it
// scales the normal only when it has changed.
//
// It reads the latency baseline on every judgement, even when the constant
// threshold alone decides. The read refreshes the baseline's memo, and a reader
// (Snapshot, NormalLatency) refreshes it too: only because every judgement
// reads it can a reader never change which normal a later judgement uses (see
// normalLatency).
func (b *Breaker) threshold(now instant) time.Duration {
	c := b.cfg.slowThreshold
	if b.normal.latencies != nil {
		normal, n := b.normal.latencies.Quantile(time.Duration(now), b.cfg.slowQ)
		if n >= b.cfg.slowMinimum {
			if normal != b.normal.scaledFrom { // the memo moved: scale it again
				b.normal.scaledFrom, b.normal.scaled = normal, scale(normal, b.cfg.slowMult)
			}
			if c == 0 || b.normal.scaled < c {
				c = b.normal.scaled
			}
		}
	}
	return c
}

// slowLimit returns the effective slow-call threshold at now: the smaller of
// Config.SlowCallThreshold, if set, and SlowCalls.Multiple times the normal
// latency, if armed. ok is false when neither is, and then no call is slow. A
// measurement can only lower the constant.
func (b *Breaker) slowLimit(now instant) (limit time.Duration, ok bool) {
	limit, ok = b.cfg.slowThreshold, b.cfg.slowThreshold > 0
	if normal, armed := b.normalLatency(now); armed {
		if m := scale(normal, b.cfg.slowMult); !ok || m < limit {
			limit, ok = m, true
		}
	}
	return limit, ok
}

// scale returns m × d, rounded down, and at least 1 ns so that a measured
// threshold is never mistaken for "none" (a normal below a microsecond can read
// 0); it saturates at the longest duration.
func scale(d time.Duration, m float64) time.Duration {
	x := float64(d) * m
	if x >= math.MaxInt64 {
		return math.MaxInt64
	}
	return max(time.Duration(x), 1)
}

// normalLatency returns the latency baseline's quantile at now, and whether the
// baseline holds SlowCalls.MinimumSamples successes, so that it is armed.
//
// histogram.Window.Quantile expires the slices that have left the window by now
// and may refresh its memo, so even a reader writes to the window. That is still
// a read of the breaker. Expiry is lazy bookkeeping: the window holds the same
// samples at now and afterwards whether or not it has been done. The memo is
// refreshed when a slice expired or enough samples were added since the last
// refresh; every judgement (isSlow) reads the baseline before its success is
// added, so between a reader and the next judgement no sample is added, and the
// judgement would have refreshed the memo from the same samples in the same
// cases: it uses the same normal with or without the reader. The one trace
// would be left on a success stamped before a read but recorded after it (its
// goroutine read the clock first and took the lock second): it counts in the
// slice of the read's instant, as it would have after any later write, since
// the window never rotates back.
func (b *Breaker) normalLatency(now instant) (time.Duration, bool) {
	if b.normal.latencies == nil {
		return 0, false
	}
	d, n := b.normal.latencies.Quantile(time.Duration(now), b.cfg.slowQ)
	return d, n >= b.cfg.slowMinimum
}

// relativePoint returns the relative trip point for the failure-baseline counts
// base, min(ceiling, max(Floor, rate × Multiple)), where the ceiling is
// Config.FailureRatio or 1; armed is false while the baseline holds fewer than
// Failures.MinimumSamples samples, or the relative trip is off.
func (b *Breaker) relativePoint(base bucket) (point float64, armed bool) {
	if b.evidence.baseline == nil || base.calls < b.cfg.failMinimum {
		return 0, false
	}
	ceiling := 1.0
	if b.cfg.failureRatio > 0 {
		ceiling = b.cfg.failureRatio
	}
	return min(ceiling, max(b.cfg.failFloor, ratio(base.failures, base.calls)*b.cfg.failMult)), true
}

// relativeTrips reports whether the trip window's counts w reach the relative
// trip point. The caller has checked MinimumCalls and the two failures.
func (b *Breaker) relativeTrips(w bucket) bool {
	if b.evidence.baseline == nil {
		return false
	}
	point, armed := b.relativePoint(b.evidence.baseline.total)
	return armed && ratio(w.failures, w.calls) >= point
}

// failurePoint returns the effective trip point of the failure-ratio trips at
// now, without rotating anything: the relative point when armed (never above
// Config.FailureRatio), else Config.FailureRatio, else 0 (no ratio trip armed).
func (b *Breaker) failurePoint(now instant) float64 {
	if b.evidence.baseline != nil {
		if point, armed := b.relativePoint(b.evidence.baseline.at(now)); armed {
			return point
		}
	}
	return b.cfg.failureRatio
}

// normalFailureRate returns the failure baseline's rate at now without rotating
// it, and whether it holds Failures.MinimumSamples samples.
func (b *Breaker) normalFailureRate(now instant) (float64, bool) {
	if b.evidence.baseline == nil {
		return 0, false
	}
	base := b.evidence.baseline.at(now)
	if base.calls < b.cfg.failMinimum {
		return 0, false
	}
	return ratio(base.failures, base.calls), true
}

// NormalLatency returns the dependency's measured normal latency as of now on
// the breaker's clock: the SlowCalls.Quantile of the durations of the successful
// attempts recorded while Closed during the last SlowCalls.Window, as the
// histogram of the latency estimator reads it (in the exact quantile's bucket, so
// within 19% of it, and within 2% for a latency that holds steady). It
// returns false ("none") while fewer than SlowCalls.MinimumSamples successes
// are in the window, which is also what an idle window decays to, and always
// when SlowCalls is disabled. Open, close, Isolate and Reset never clear it.
// Reading it never changes the breaker.
func (b *Breaker) NormalLatency() (time.Duration, bool) {
	now := b.now()
	b.mu.Lock()
	defer b.mu.Unlock()
	d, ok := b.normalLatency(b.clamp(now))
	if !ok {
		return 0, false
	}
	return d, true
}

// NormalFailureRate returns the dependency's measured normal failure rate as of
// now on the breaker's clock: the fraction of failures among the evidence
// samples recorded while Closed during the last Failures.Window. It returns
// false ("none") while fewer than Failures.MinimumSamples samples are in the
// window, which is also what an idle window decays to, and always when the
// relative trip is off. Open, close, Isolate and Reset never clear it. Reading it
// never changes the breaker.
func (b *Breaker) NormalFailureRate() (float64, bool) {
	now := b.now()
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.normalFailureRate(b.clamp(now))
}

package breakertest

import (
	"math"
	"time"

	"github.com/resilience-go/pipeline/internal/breakerconf"
	"github.com/resilience-go/pipeline/internal/histogram"
	"github.com/resilience-go/pipeline/policy/breaker"
)

// newNormals fills in the model's measured normals from cfg, which is valid.
func (m *model) newNormals(cfg breaker.Config) {
	orF := func(v, def float64) float64 {
		if v == 0 {
			return def
		}
		return v
	}
	sc := cfg.SlowCalls
	m.SlowCallsOn = !sc.Disabled
	m.SlowCallsMultiple = orF(sc.Multiple, breakerconf.DefaultSlowCallsMultiple)
	m.SlowCallsQuantile = orF(sc.Quantile, breakerconf.DefaultSlowCallsQuantile)
	m.SlowCallsWindow = sc.Window
	if m.SlowCallsWindow == 0 {
		m.SlowCallsWindow = breakerconf.DefaultSlowCallsWindow
	}
	m.SlowCallsMinimumSamples = sc.MinimumSamples
	if m.SlowCallsMinimumSamples == 0 {
		m.SlowCallsMinimumSamples = breakerconf.DefaultSlowCallsMinimumSamples
	}
	// A SlowCalls left at its zero value widens its window to win the race
	// against the trip window, or steps aside past an hour.
	if need := 2 * m.SlowCallRatio * float64(m.TripWindow); sc == (breaker.SlowCalls{}) &&
		m.SlowCallsQuantile*float64(m.SlowCallsWindow) < need {
		widened := math.Ceil(need / m.SlowCallsQuantile)
		if widened > float64(breakerconf.MaxWidenedSlowCallsWindow) {
			m.SlowCallsOn = false
		}
		m.SlowCallsWindow = time.Duration(widened)
	}
	if m.SlowCallsOn {
		w, err := histogram.New(m.SlowCallsWindow, breakerconf.BaselineSlices)
		if err != nil {
			panic("breakertest: newModel: invalid SlowCalls.Window: " + err.Error())
		}
		m.normal.latencies = w
	}

	f := cfg.Failures
	m.FailuresOn = !f.Disabled
	m.FailuresMultiple = orF(f.Multiple, breakerconf.DefaultFailuresMultiple)
	m.FailuresFloor = orF(f.Floor, breakerconf.DefaultFailuresFloor)
	m.FailuresMinimumSamples = f.MinimumSamples
	if m.FailuresMinimumSamples == 0 {
		m.FailuresMinimumSamples = breakerconf.DefaultFailuresMinimumSamples
	}
	m.FailuresWindow = f.Window
	if m.FailuresWindow == 0 {
		// Derived: twice the trip window, Multiple times over, rounded up; a
		// default that would need more than an hour steps aside.
		derived := math.Ceil(2 * float64(m.TripWindow) * m.FailuresMultiple)
		if derived > float64(breakerconf.MaxDerivedFailuresWindow) {
			m.FailuresOn = false
		}
		m.FailuresWindow = max(time.Duration(derived), breakerconf.BaselineSlices)
	}
}

// isSlow reports whether an attempt of duration d ending at now is slow: longer
// than the effective slow-call threshold.
func (m *model) isSlow(now time.Time, d time.Duration) bool {
	limit, ok := m.slowCallLimit(now)
	return ok && d > limit
}

// isSlowProbe reports whether a probe of duration d ending at now is slow:
// longer than ProbeSlowFraction of the effective slow-call threshold, rounded
// down to the nanosecond and at least one.
func (m *model) isSlowProbe(now time.Time, d time.Duration) bool {
	limit, ok := m.slowCallLimit(now)
	if ok && m.ProbeSlowFraction < 1 {
		limit = max(time.Duration(float64(limit)*m.ProbeSlowFraction), time.Nanosecond)
	}
	return ok && d > limit
}

// slowCallLimit returns the effective slow-call threshold at now, and false when
// no threshold is armed.
func (m *model) slowCallLimit(now time.Time) (time.Duration, bool) {
	limits := []time.Duration{}
	if m.SlowCallThreshold > 0 {
		limits = append(limits, m.SlowCallThreshold)
	}
	if normal, ok := m.NormalLatency(now); ok {
		x := float64(normal) * m.SlowCallsMultiple
		measured := time.Duration(math.MaxInt64)
		if x < math.MaxInt64 {
			measured = max(time.Duration(x), time.Nanosecond)
		}
		limits = append(limits, measured)
	}
	if len(limits) == 0 {
		return 0, false
	}
	return min(limits[0], limits[len(limits)-1]), true
}

// NormalLatency is what the breaker's NormalLatency must return at now.
func (m *model) NormalLatency(now time.Time) (time.Duration, bool) {
	if !m.SlowCallsOn {
		return 0, false
	}
	d, n := m.normal.latencies.Quantile(now.Sub(m.Origin), m.SlowCallsQuantile)
	if n < m.SlowCallsMinimumSamples {
		return 0, false
	}
	return d, true
}

// baselineCounts returns the evidence samples and failures of the failure
// baseline at now: those recorded while Closed in the bucket of now and the
// BaselineSlices-1 before it.
func (m *model) baselineCounts(now time.Time) (calls, failures int) {
	width := m.FailuresWindow / breakerconf.BaselineSlices
	index := func(t time.Time) int64 { return int64(t.Sub(m.Origin) / width) }
	for len(m.evidence.outcomes) > 0 && index(now)-index(m.evidence.outcomes[0].at) >= breakerconf.BaselineSlices {
		m.evidence.outcomes = m.evidence.outcomes[1:] // gone for good: time never runs back
	}
	for _, o := range m.evidence.outcomes {
		calls++
		if o.failure {
			failures++
		}
	}
	return calls, failures
}

// NormalFailureRate is what the breaker's NormalFailureRate must return at now.
func (m *model) NormalFailureRate(now time.Time) (float64, bool) {
	if !m.FailuresOn {
		return 0, false
	}
	calls, failures := m.baselineCounts(now)
	if calls < m.FailuresMinimumSamples {
		return 0, false
	}
	return float64(failures) / float64(calls), true
}

// relativePoint returns the relative trip point at now, and false while it is
// disarmed.
func (m *model) relativePoint(now time.Time) (float64, bool) {
	rate, ok := m.NormalFailureRate(now)
	if !ok {
		return 0, false
	}
	ceiling := 1.0
	if m.FailureRatio > 0 {
		ceiling = m.FailureRatio
	}
	return min(ceiling, max(m.FailuresFloor, rate*m.FailuresMultiple)), true
}

// failureTripPoint is the effective failure-ratio trip point at now, as the
// breaker's Snapshot reports it: the relative point when armed, else
// FailureRatio (0 when unset).
func (m *model) failureTripPoint(now time.Time) float64 {
	if point, ok := m.relativePoint(now); ok {
		return point
	}
	return m.FailureRatio
}

// Pressure is what Breaker.Pressure reads at now: 1 unless the breaker reads
// Closed; otherwise the larger of the failure run over Consecutive and, with
// MinimumCalls samples in the trip window, the window's failure ratio over
// the effective trip point, the relative one counting only from two failures
// (one failure cannot trip it) and FailureRatio from the first.
func (m *model) Pressure(now time.Time) float64 {
	if m.state != breaker.Closed {
		return 1 // Recovering with its ramp run out too: nothing has closed it yet
	}
	p := float64(m.evidence.failures) / float64(m.Consecutive)
	if since := now.Sub(m.breaks.closedAt); m.breaks.recovered && since < m.TripWindow {
		p = max(p, 1-float64(since)/float64(m.TripWindow))
	}
	if calls, failures, _ := m.tripWindowCounts(now); calls >= m.MinimumCalls {
		point := m.failureTripPoint(now)
		if _, relative := m.relativePoint(now); relative && failures < 2 {
			point = m.FailureRatio
		}
		if point > 0 {
			p = max(p, float64(failures)/float64(calls)/point)
		}
	}
	return min(p, 1)
}

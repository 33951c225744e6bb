package breakertest

import (
	"time"

	"github.com/resilience-go/pipeline/policy/breaker"
)

// outcomeAt is one evidence sample of the failure baseline.
type outcomeAt struct {
	at      time.Time
	failure bool
}

type sample struct {
	bucket        int64
	failure, slow bool
}

// modelEvidence is what trips a Closed model: the failure run, the trip
// window's samples since it was last cleared, and the failure baseline's
// samples, oldest first, never cleared.
type modelEvidence struct {
	failures int
	samples  []sample
	outcomes []outcomeAt
}

// recordClosed applies an outcome to a Closed model: judged against the
// normal latency before this sample, the sample then joins the baselines and
// the trip window, and the trips are evaluated, first match wins.
func (m *model) recordClosed(now time.Time, failure, success bool, d time.Duration) {
	if !failure && !success {
		return
	}
	e := &m.evidence
	slow := m.isSlow(now, d)
	if failure {
		e.failures++
	} else {
		e.failures = 0
		if m.SlowCallsOn {
			m.normal.latencies.Add(now.Sub(m.Origin), d)
		}
	}
	if m.FailuresOn {
		e.outcomes = append(e.outcomes, outcomeAt{at: now, failure: failure})
	}
	e.samples = append(e.samples, sample{bucket: m.bucket(now), failure: failure, slow: slow})
	calls, failures, slows := m.tripWindowCounts(now)
	ratio := func(n int) float64 { return float64(n) / float64(calls) }
	point, relative := m.relativePoint(now)
	switch {
	case e.failures >= m.Consecutive:
		m.trip(now, breaker.CauseConsecutiveFailures)
	case calls < m.MinimumCalls:
	case m.FailureRatio > 0 && ratio(failures) >= m.FailureRatio:
		m.trip(now, breaker.CauseFailureRatio)
	case relative && failures >= 2 && ratio(failures) >= point:
		m.trip(now, breaker.CauseRelativeFailureRatio)
	case (m.SlowCallThreshold > 0 || m.SlowCallsOn) && ratio(slows) >= m.SlowCallRatio:
		m.trip(now, breaker.CauseSlowCalls)
	}
}

// tripWindowCounts returns the evidence samples, failures and slow samples in the
// trip window at now.
func (m *model) tripWindowCounts(now time.Time) (calls, failures, slow int) {
	for _, s := range m.evidence.samples {
		if m.bucket(now)-s.bucket < int64(m.Buckets) {
			calls++
			if s.failure {
				failures++
			}
			if s.slow {
				slow++
			}
		}
	}
	return calls, failures, slow
}

// bucket is the index of the window bucket holding t.
func (m *model) bucket(t time.Time) int64 {
	width := m.TripWindow / time.Duration(m.Buckets)
	if t.Before(m.Origin) {
		return 0
	}
	return int64(t.Sub(m.Origin) / width)
}

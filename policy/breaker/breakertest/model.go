package breakertest

import (
	"fmt"
	"time"

	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/breaker"
)

// Model is a reference model of [breaker.Breaker]: the same state machine written
// as plainly as possible, with every sample kept in a list instead of a ring of
// buckets. It takes the time of every operation as an argument and is not safe
// for concurrent use.
type Model struct {
	// The configuration, with defaults filled in.
	Consecutive, MinimumCalls, Buckets, Probes, ProbeSuccesses int
	FailureRatio, SlowCallRatio                                float64
	TripWindow, SlowCallThreshold, BreakDuration, MaxBreak     time.Duration
	Jitter                                                     breaker.Jitter
	// Origin is the breaker's creation time, where its window buckets start.
	Origin time.Time
	// Served, if set, chooses the break actually served for a nominal break; the
	// model checks the choice against the jitter bounds. Nil serves the nominal.
	Served func(nominal time.Duration) time.Duration
	// Err is the first jitter-bound violation the model saw, if any.
	Err error

	state     breaker.State
	failures  int
	samples   []sample
	trips     int
	nominal   time.Duration
	served    time.Duration
	until     time.Time
	slots     map[int]time.Time // probe id -> expiry
	lastID    int
	successes int
}

type sample struct {
	bucket        int64
	failure, slow bool
}

// ModelTicket is the model's admission of one attempt.
type ModelTicket struct {
	// Admitted is false for a refusal.
	Admitted bool
	// Probe is the probe slot id, or 0.
	Probe int
	// Start is the admission time.
	Start time.Time
}

// NewModel returns the model of a breaker built from cfg at time origin. cfg must
// be valid.
func NewModel(cfg breaker.Config, origin time.Time) *Model {
	or := func(v, def int) int {
		if v == 0 {
			return def
		}
		return v
	}
	m := &Model{
		Consecutive:       or(cfg.ConsecutiveFailures, breaker.DefaultConsecutiveFailures),
		MinimumCalls:      or(cfg.MinimumCalls, breaker.DefaultMinimumCalls),
		Buckets:           or(cfg.WindowBuckets, breaker.DefaultWindowBuckets),
		Probes:            or(cfg.HalfOpenProbes, breaker.DefaultHalfOpenProbes),
		ProbeSuccesses:    or(cfg.ProbeSuccesses, breaker.DefaultProbeSuccesses),
		FailureRatio:      cfg.FailureRatio,
		SlowCallRatio:     cfg.SlowCallRatio,
		TripWindow:        cfg.TripWindow,
		SlowCallThreshold: cfg.SlowCallThreshold,
		BreakDuration:     cfg.BreakDuration,
		MaxBreak:          cfg.MaxBreakDuration,
		Jitter:            cfg.BreakJitter,
		Origin:            origin,
		slots:             map[int]time.Time{},
	}
	if m.SlowCallRatio == 0 {
		m.SlowCallRatio = breaker.DefaultSlowCallRatio
	}
	if m.TripWindow == 0 {
		m.TripWindow = breaker.DefaultTripWindow
	}
	if m.BreakDuration == 0 {
		m.BreakDuration = breaker.DefaultBreakDuration
	}
	if m.MaxBreak == 0 {
		m.MaxBreak = max(breaker.DefaultMaxBreakDuration, m.BreakDuration)
	}
	return m
}

// State is what the breaker's State method must read at now.
func (m *Model) State(now time.Time) breaker.State {
	if m.state == breaker.Open && !now.Before(m.until) {
		return breaker.HalfOpen
	}
	return m.state
}

// Snapshot is what the breaker's Snapshot method must read at now.
func (m *Model) Snapshot(now time.Time) breaker.Snapshot {
	s := breaker.Snapshot{
		State: m.State(now), ConsecutiveFailures: m.failures, Trips: m.trips,
		Nominal: m.nominal, Break: m.served, BreakEnds: m.until, ProbeSuccesses: m.successes,
	}
	if m.state == breaker.HalfOpen {
		for _, exp := range m.slots {
			if now.Before(exp) {
				s.Probes++
			}
		}
	}
	return s
}

// Admit decides an admission at now, returning the ticket and, for a refusal,
// the retry-after hint.
func (m *Model) Admit(now time.Time) (ModelTicket, time.Duration) {
	switch m.state {
	case breaker.Isolated:
		return ModelTicket{}, 0
	case breaker.Open:
		if now.Before(m.until) {
			return ModelTicket{}, m.until.Sub(now)
		}
		m.state = breaker.HalfOpen
		m.successes = 0
	}
	if m.state != breaker.HalfOpen {
		return ModelTicket{Admitted: true, Start: now}, 0
	}
	for id, exp := range m.slots {
		if !now.Before(exp) {
			delete(m.slots, id)
		}
	}
	if len(m.slots) >= m.Probes {
		return ModelTicket{}, 0
	}
	m.lastID++
	m.slots[m.lastID] = now.Add(m.nominal)
	return ModelTicket{Admitted: true, Probe: m.lastID, Start: now}, 0
}

// Record applies the outcome v, of duration d, of the attempt t at now.
func (m *Model) Record(now time.Time, t ModelTicket, v outcome.Verdict, d time.Duration) {
	if !t.Admitted {
		return
	}
	failure := v.Kind == outcome.Transient && !v.SelfImposed
	success := v.Kind == outcome.OK && !v.SelfImposed && !v.Canceled
	slow := (failure || success) && m.SlowCallThreshold > 0 && d > m.SlowCallThreshold
	switch m.state {
	case breaker.Open, breaker.Isolated:
		return
	case breaker.HalfOpen:
		exp, held := m.slots[t.Probe]
		if t.Probe == 0 || !held {
			return
		}
		delete(m.slots, t.Probe)
		if !now.Before(exp) {
			return
		}
		switch {
		case failure, slow:
			m.trip(now)
		case success:
			m.successes++
			if m.successes >= m.ProbeSuccesses {
				m.state = breaker.Closed
				m.trips = 0
				m.clear()
			}
		}
		return
	}
	if !failure && !success {
		return
	}
	if failure {
		m.failures++
	} else {
		m.failures = 0
	}
	m.samples = append(m.samples, sample{bucket: m.bucket(now), failure: failure, slow: slow})
	var calls, failures, slows int
	for _, s := range m.samples {
		if m.bucket(now)-s.bucket < int64(m.Buckets) {
			calls++
			if s.failure {
				failures++
			}
			if s.slow {
				slows++
			}
		}
	}
	ratioTrip := func(n int, ratio float64) bool {
		return ratio > 0 && calls >= m.MinimumCalls && float64(n)/float64(calls) >= ratio
	}
	slowRatio := 0.0
	if m.SlowCallThreshold > 0 {
		slowRatio = m.SlowCallRatio
	}
	if m.failures >= m.Consecutive || ratioTrip(failures, m.FailureRatio) || ratioTrip(slows, slowRatio) {
		m.trip(now)
	}
}

// bucket is the index of the window bucket holding t.
func (m *Model) bucket(t time.Time) int64 {
	width := m.TripWindow / time.Duration(m.Buckets)
	if t.Before(m.Origin) {
		return 0
	}
	return int64(t.Sub(m.Origin) / width)
}

func (m *Model) trip(now time.Time) {
	m.trips++
	m.nominal = m.BreakDuration
	for range m.trips - 1 {
		m.nominal = min(2*m.nominal, m.MaxBreak)
	}
	m.served = m.nominal
	if m.Served != nil {
		m.served = m.Served(m.nominal)
	}
	lo := map[breaker.Jitter]time.Duration{breaker.JitterEqual: m.nominal / 2, breaker.JitterNone: m.nominal}[m.Jitter]
	if (m.served < lo || m.served > m.nominal) && m.Err == nil {
		m.Err = fmt.Errorf("breakertest: %v jitter served %v for a nominal break of %v", m.Jitter, m.served, m.nominal)
	}
	m.until = now.Add(m.served)
	m.state = breaker.Open
	m.clear()
}

func (m *Model) clear() {
	m.failures, m.successes, m.samples = 0, 0, nil
	clear(m.slots)
}

// Isolate applies Breaker.Isolate.
func (m *Model) Isolate() {
	if m.state != breaker.Isolated {
		m.state = breaker.Isolated
		m.clear()
	}
}

// Reset applies Breaker.Reset.
func (m *Model) Reset() {
	m.state, m.trips = breaker.Closed, 0
	m.nominal, m.served, m.until = 0, 0, time.Time{}
	m.clear()
}

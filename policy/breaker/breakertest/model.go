package breakertest

import (
	"fmt"
	"time"

	"github.com/resilience-go/pipeline/internal/breakerconf"
	"github.com/resilience-go/pipeline/internal/histogram"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/breaker"
)

// model is a reference model of [breaker.Breaker]: the same state machine written
// as plainly as possible, with every sample kept in a list instead of a ring of
// buckets. Its normal latency is read from a [histogram.Window], the histogram the
// breaker specifies; everything else is its own. It takes the time of every
// operation as an argument and is not safe for concurrent use.
type model struct {
	// The configuration, with defaults filled in.
	Consecutive, MinimumCalls, Buckets, Probes, ProbeSuccesses, ProbeSlowLead int
	FailureRatio, SlowCallRatio, ProbeSlowFraction                            float64
	TripWindow, SlowCallThreshold, BreakDuration, MaxBreak                    time.Duration
	Jitter                                                                    breaker.Jitter
	// The measured normal latency (Config.SlowCalls), with defaults filled in;
	// SlowCallsOn is false when it is disabled.
	SlowCallsOn                          bool
	SlowCallsMultiple, SlowCallsQuantile float64
	SlowCallsWindow                      time.Duration
	SlowCallsMinimumSamples              int
	// The relative failure ratio (Config.Failures), with defaults filled in and
	// the window derived; FailuresOn is false when it is disabled or steps aside.
	FailuresOn                      bool
	FailuresMultiple, FailuresFloor float64
	FailuresWindow                  time.Duration
	FailuresMinimumSamples          int
	// The recovery ramp (Config.Recovery), with defaults filled in; RecoveryOn
	// is false when Config.Recovery is nil.
	RecoveryOn                        bool
	RecoveryFraction, RecoveryInitial float64
	RecoveryMinimum, RecoveryMaximum  time.Duration
	// RecoveryTrickleEvery is the trickle's longest gap (Recovery.TrickleEvery
	// with its default), 0 when there is no trickle.
	RecoveryTrickleEvery time.Duration
	// Origin is the breaker's creation time, where its window buckets start.
	Origin time.Time
	// Shadow is the breaker's mode (Config.Shadow, Breaker.SetShadow): in
	// shadow mode, Admit turns every refusal into a ticket with Shadow set,
	// whose outcome Record ignores.
	Shadow bool
	// Served, if set, chooses the break actually served for a nominal break; the
	// model checks the choice against the jitter bounds. Nil serves the nominal.
	Served func(nominal time.Duration) time.Duration
	// Err is the first jitter-bound violation the model saw, if any.
	Err error
	// Transitions lists every change of stored state the model made, in order,
	// with From, To, Cause, Break and Shadow set (At is left zero).
	Transitions []breaker.Transition

	// The model's state, in the breaker's parts: what trips it while
	// Closed, the measured normal latency, the schedule of breaks, the
	// half-open probes, the trickle and the recovery ramp.
	state    breaker.State
	evidence modelEvidence
	normal   modelNormal
	breaks   modelBreaks
	probes   modelProbes
	trickle  modelTrickle
	ramp     modelRamp
	credit   float64 // the trickle's or the ramp's shares offered, less its admissions
}

// modelNormal is the latency baseline; latencies is nil when SlowCallsOn is
// false.
type modelNormal struct {
	latencies *histogram.Window
}

// modelBreaks is the schedule of breaks.
type modelBreaks struct {
	trips           int
	nominal, served time.Duration
	until           time.Time
	openedAt        time.Time // when the latest trip opened the model
	closedAt        time.Time // when it last closed on its own, if recovered
	recovered       bool
}

// modelRamp is the recovery ramp; the current one is number count.
type modelRamp struct {
	count    int
	start    time.Time
	length   time.Duration
	setBack  bool      // the ramp has been set back
	round    time.Time // its latest setback
	held     bool
	heldAt   time.Time
	fastRun  int // fast successes in a row
	failures int // failures in a row
}

// modelTicket is the model's admission of one attempt.
type modelTicket struct {
	// Admitted is false for a refusal.
	Admitted bool
	// Probe is the probe slot id, or 0.
	Probe int
	// Ramp is the number of the recovery ramp that admitted the attempt (ramps
	// are numbered from 1), or 0.
	Ramp int
	// Start is the admission time.
	Start time.Time
	// Shadow is true for an attempt that only shadow mode admitted: a real
	// breaker would have refused it. Admitted is true too.
	Shadow bool
}

// newModel returns the model of a breaker built from cfg at time origin. cfg must
// be valid.
func newModel(cfg breaker.Config, origin time.Time) *model {
	or := func(v, def int) int {
		if v == 0 {
			return def
		}
		return v
	}
	m := &model{
		Consecutive:       or(cfg.ConsecutiveFailures, breakerconf.DefaultConsecutiveFailures),
		MinimumCalls:      or(cfg.MinimumCalls, breakerconf.DefaultMinimumCalls),
		Buckets:           or(cfg.WindowBuckets, breakerconf.DefaultWindowBuckets),
		Probes:            or(cfg.HalfOpenProbes, breakerconf.DefaultHalfOpenProbes),
		ProbeSuccesses:    or(cfg.ProbeSuccesses, breakerconf.DefaultProbeSuccesses),
		ProbeSlowLead:     or(cfg.ProbeSlowLead, breakerconf.DefaultProbeSlowLead),
		ProbeSlowFraction: cfg.ProbeSlowFraction,
		FailureRatio:      cfg.FailureRatio,
		SlowCallRatio:     cfg.SlowCallRatio,
		TripWindow:        cfg.TripWindow,
		SlowCallThreshold: cfg.SlowCallThreshold,
		BreakDuration:     cfg.BreakDuration,
		MaxBreak:          cfg.MaxBreakDuration,
		Jitter:            cfg.BreakJitter,
		Origin:            origin,
		Shadow:            cfg.Shadow,
		probes:            modelProbes{slots: map[int]time.Time{}},
	}
	if m.SlowCallRatio == 0 {
		m.SlowCallRatio = breakerconf.DefaultSlowCallRatio
	}
	if m.ProbeSlowFraction == 0 {
		m.ProbeSlowFraction = breakerconf.DefaultProbeSlowFraction
	}
	if m.TripWindow == 0 {
		m.TripWindow = breakerconf.DefaultTripWindow
	}
	if m.BreakDuration == 0 {
		m.BreakDuration = breakerconf.DefaultBreakDuration
	}
	if m.MaxBreak == 0 {
		m.MaxBreak = max(breakerconf.DefaultMaxBreakDuration, m.BreakDuration)
	}
	m.newNormals(cfg)
	m.newRecovery(cfg)
	return m
}

// State is what the breaker's State method must read at now.
func (m *model) State(now time.Time) breaker.State {
	if m.state == breaker.Open && !now.Before(m.breaks.until) {
		return breaker.HalfOpen
	}
	if m.state == breaker.Recovering && m.rampFraction(now) >= 1 {
		return breaker.Closed
	}
	return m.state
}

// Snapshot is what the breaker's Snapshot method must read at now.
func (m *model) Snapshot(now time.Time) breaker.Snapshot {
	s := breaker.Snapshot{
		State: m.State(now), ConsecutiveFailures: m.evidence.failures, Trips: m.breaks.trips,
		Nominal: m.breaks.nominal, Break: m.breaks.served, BreakEnds: m.breaks.until, ProbeSuccesses: m.probes.successes, SlowProbes: m.probes.slow,
		Shadow: m.Shadow,
	}
	if m.state == breaker.HalfOpen || m.state == breaker.Open {
		for _, exp := range m.probes.slots {
			if now.Before(exp) {
				s.Probes++
			}
		}
	}
	s.NormalLatency, s.NormalLatencyOK = m.NormalLatency(now)
	if m.SlowCallsOn {
		s.NormalLatencyHeld = m.normal.latencies.Held(now.Sub(m.Origin))
		// The race of Config.Validate, on the history held: the normal holds
		// out for Quantile x Held, the trip needs SlowCallRatio x TripWindow.
		s.NormalLatencyHoldsOut = s.NormalLatencyOK &&
			m.SlowCallsQuantile*float64(s.NormalLatencyHeld) >= 2*m.SlowCallRatio*float64(m.TripWindow)
	}
	s.NormalFailureRate, s.NormalFailureRateOK = m.NormalFailureRate(now)
	s.SlowCallThreshold, _ = m.slowCallLimit(now)
	s.FailureTripPoint = m.failureTripPoint(now)
	switch {
	case s.State == breaker.Recovering:
		s.RampStarted, s.RampLength = m.ramp.start, m.ramp.length
		s.RampFraction, s.RampHeld = m.rampFraction(now), m.ramp.held
	case m.state == breaker.Recovering: // ran out: what closing it will leave
		s.Trips = 0
	}
	return s
}

// Admit decides an admission at now, returning the ticket and, for a refusal,
// the retry-after hint. In shadow mode a refusal is a ticket with Shadow set,
// returned with the hint the refusal would have carried (its Rejection's).
func (m *model) Admit(now time.Time) (modelTicket, time.Duration) {
	t, hint := m.admit(now)
	if !t.Admitted && m.Shadow {
		return modelTicket{Admitted: true, Shadow: true, Start: now}, hint
	}
	return t, hint
}

// admit is Admit in the real mode.
func (m *model) admit(now time.Time) (modelTicket, time.Duration) {
	switch m.state {
	case breaker.Isolated:
		return modelTicket{}, 0
	case breaker.Open:
		if now.Before(m.breaks.until) {
			if t, ok := m.admitTrickle(now); ok {
				return t, 0
			}
			return modelTicket{}, m.breaks.until.Sub(now)
		}
		m.transition(breaker.HalfOpen, breaker.CauseBreakElapsed)
		m.probes.successes, m.probes.slow = 0, 0
	case breaker.Recovering:
		return m.admitRamp(now)
	}
	if m.state != breaker.HalfOpen {
		return modelTicket{Admitted: true, Start: now}, 0
	}
	t, _ := m.takeSlot(now)
	return t, 0
}

// Record applies the outcome v, of duration d, of the attempt t at now, by
// the state the model is in.
func (m *model) Record(now time.Time, t modelTicket, v outcome.Verdict, d time.Duration) {
	if !t.Admitted || t.Shadow {
		return
	}
	failure := v.Kind == outcome.Transient && !v.SelfImposed
	success := v.Kind == outcome.OK && !v.SelfImposed && !v.Canceled
	switch m.state {
	case breaker.Open:
		m.recordTrickle(now, t, success, d)
	case breaker.Isolated:
	case breaker.HalfOpen:
		m.recordProbe(now, t, failure, success, d)
	case breaker.Recovering:
		if m.rampFraction(now) < 1 {
			m.recordRamp(now, t, failure, success, d)
			return
		}
		m.closeRamp(now) // ran out: the outcome lands in a closed breaker
		m.recordClosed(now, failure, success, d)
	default:
		m.recordClosed(now, failure, success, d)
	}
}

func (m *model) trip(now time.Time, cause breaker.Cause) {
	m.breaks.trips++
	m.breaks.nominal = m.BreakDuration
	for range m.breaks.trips - 1 {
		m.breaks.nominal = min(2*m.breaks.nominal, m.MaxBreak)
	}
	m.breaks.served = m.breaks.nominal
	if m.Served != nil {
		m.breaks.served = m.Served(m.breaks.nominal)
	}
	if lo, hi := jitterBounds(m.Jitter, m.breaks.nominal); (m.breaks.served < lo || m.breaks.served > hi) && m.Err == nil {
		m.Err = fmt.Errorf("breakertest: %v jitter served %v for a nominal break of %v", m.Jitter, m.breaks.served, m.breaks.nominal)
	}
	m.breaks.until = now.Add(m.breaks.served)
	m.breaks.openedAt, m.breaks.recovered = now, false
	m.trickle.on, m.trickle.last, m.credit = m.RecoveryTrickleEvery > 0, now, 0
	m.transition(breaker.Open, cause)
	m.Transitions[len(m.Transitions)-1].Break = m.breaks.served
	m.clear()
}

// jitterBounds returns the shortest and longest break j may serve for the
// nominal break d, by the rule the Jitter constants document: JitterEqual
// [d/2, d] (an odd d's half rounded up), JitterFull [0, d], JitterNone exactly
// d. The model states the rule itself rather than asking the breaker, so that
// the property checks the breaker against it.
func jitterBounds(j breaker.Jitter, d time.Duration) (lo, hi time.Duration) {
	switch j {
	case breaker.JitterFull:
		return 0, d
	case breaker.JitterNone:
		return d, d
	}
	return d - d/2, d
}

// transition moves the model to state to, and lists the change.
func (m *model) transition(to breaker.State, cause breaker.Cause) {
	m.Transitions = append(m.Transitions, breaker.Transition{From: m.state, To: to, Cause: cause, Shadow: m.Shadow})
	m.state = to
}

// clear forgets the trip window, the failure run and the probes; never the
// baselines.
func (m *model) clear() {
	m.evidence.failures, m.probes.successes, m.probes.slow, m.evidence.samples = 0, 0, 0, nil
	clear(m.probes.slots)
}

// Isolate applies Breaker.Isolate.
func (m *model) Isolate() {
	if m.state != breaker.Isolated {
		m.transition(breaker.Isolated, breaker.CauseIsolate)
		m.clear()
	}
}

// IsolateFor applies Breaker.IsolateFor(d) at now: Open for exactly d, from
// any state, without counting a trip.
func (m *model) IsolateFor(now time.Time, d time.Duration) {
	if m.state == breaker.Recovering && m.rampFraction(now) >= 1 {
		m.closeRamp(now) // it read Closed: close it first, as an admission would
	}
	m.breaks.served = d
	m.breaks.until = now.Add(d)
	m.trickle.on, m.breaks.openedAt = false, now
	m.transition(breaker.Open, breaker.CauseForced)
	m.Transitions[len(m.Transitions)-1].Break = d
	m.clear()
}

// SetShadow applies Breaker.SetShadow(on).
func (m *model) SetShadow(on bool) { m.Shadow = on }

// Reset applies Breaker.Reset.
func (m *model) Reset() {
	if m.state != breaker.Closed {
		m.transition(breaker.Closed, breaker.CauseReset)
	}
	m.breaks.trips, m.breaks.recovered = 0, false
	m.breaks.nominal, m.breaks.served, m.breaks.until = 0, 0, time.Time{}
	m.clear()
}

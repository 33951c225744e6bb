package breakertest

import (
	"fmt"
	"time"

	"github.com/resilience-go/pipeline/internal/breakerconf"
	"github.com/resilience-go/pipeline/latency"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/breaker"
)

// Model is a reference model of [breaker.Breaker]: the same state machine written
// as plainly as possible, with every sample kept in a list instead of a ring of
// buckets. Its normal latency is read from a [latency.Window], the histogram the
// breaker specifies; everything else is its own. It takes the time of every
// operation as an argument and is not safe for concurrent use.
type Model struct {
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

	state     breaker.State
	failures  int
	samples   []sample // the trip window's, since it was last cleared
	trips     int
	nominal   time.Duration
	served    time.Duration
	until     time.Time
	slots     map[int]time.Time // probe id -> expiry
	lastID    int
	successes int
	// slowProbes counts the slow successful probes of the half-open phase.
	slowProbes int

	latencies *latency.Window // the latency baseline; nil when SlowCallsOn is false
	outcomes  []outcomeAt     // the failure baseline's samples, oldest first; never cleared

	openedAt    time.Time // when the latest trip opened the model
	closedAt    time.Time // when it last closed on its own, if recovered
	recovered   bool
	trickling   bool // the break lets probes through
	lastTrickle time.Time

	ramps        int // ramps started; the current one is number ramps
	rampStart    time.Time
	rampLength   time.Duration
	setBack      bool      // the ramp has been set back
	round        time.Time // its latest setback
	held         bool
	heldAt       time.Time
	fastRun      int     // fast successes in a row
	rampFailures int     // failures in a row
	credit       float64 // the trickle's or the ramp's shares offered, less its admissions
}

type sample struct {
	bucket        int64
	failure, slow bool
}

// outcomeAt is one evidence sample of the failure baseline.
type outcomeAt struct {
	at      time.Time
	failure bool
}

// ModelTicket is the model's admission of one attempt.
type ModelTicket struct {
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
		slots:             map[int]time.Time{},
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
func (m *Model) State(now time.Time) breaker.State {
	if m.state == breaker.Open && !now.Before(m.until) {
		return breaker.HalfOpen
	}
	if m.state == breaker.Recovering && m.rampFraction(now) >= 1 {
		return breaker.Closed
	}
	return m.state
}

// Snapshot is what the breaker's Snapshot method must read at now.
func (m *Model) Snapshot(now time.Time) breaker.Snapshot {
	s := breaker.Snapshot{
		State: m.State(now), ConsecutiveFailures: m.failures, Trips: m.trips,
		Nominal: m.nominal, Break: m.served, BreakEnds: m.until, ProbeSuccesses: m.successes, SlowProbes: m.slowProbes,
		Shadow: m.Shadow,
	}
	if m.state == breaker.HalfOpen || m.state == breaker.Open {
		for _, exp := range m.slots {
			if now.Before(exp) {
				s.Probes++
			}
		}
	}
	s.NormalLatency, s.NormalLatencyOK = m.NormalLatency(now)
	if m.SlowCallsOn {
		s.NormalLatencyHeld = m.latencies.Held(now.Sub(m.Origin))
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
		s.RampStarted, s.RampLength = m.rampStart, m.rampLength
		s.RampFraction, s.RampHeld = m.rampFraction(now), m.held
	case m.state == breaker.Recovering: // ran out: what closing it will leave
		s.Trips = 0
	}
	return s
}

// Admit decides an admission at now, returning the ticket and, for a refusal,
// the retry-after hint. In shadow mode a refusal is a ticket with Shadow set,
// returned with the hint the refusal would have carried (its Rejection's).
func (m *Model) Admit(now time.Time) (ModelTicket, time.Duration) {
	t, hint := m.admit(now)
	if !t.Admitted && m.Shadow {
		return ModelTicket{Admitted: true, Shadow: true, Start: now}, hint
	}
	return t, hint
}

// admit is Admit in the real mode.
func (m *Model) admit(now time.Time) (ModelTicket, time.Duration) {
	switch m.state {
	case breaker.Isolated:
		return ModelTicket{}, 0
	case breaker.Open:
		if now.Before(m.until) {
			if t, ok := m.admitTrickle(now); ok {
				return t, 0
			}
			return ModelTicket{}, m.until.Sub(now)
		}
		m.transition(breaker.HalfOpen, breaker.CauseBreakElapsed)
		m.successes, m.slowProbes = 0, 0
	case breaker.Recovering:
		return m.admitRamp(now)
	}
	if m.state != breaker.HalfOpen {
		return ModelTicket{Admitted: true, Start: now}, 0
	}
	t, _ := m.takeSlot(now)
	return t, 0
}

// takeSlot gives a probe slot to an attempt at now, once the expired ones are
// freed, and reports false when every slot is held.
func (m *Model) takeSlot(now time.Time) (ModelTicket, bool) {
	for id, exp := range m.slots {
		if !now.Before(exp) {
			delete(m.slots, id)
		}
	}
	if len(m.slots) >= m.Probes {
		return ModelTicket{}, false
	}
	m.lastID++
	life := m.nominal
	if life == 0 { // only IsolateFor has opened the model: no trip yet
		life = m.BreakDuration
	}
	m.slots[m.lastID] = now.Add(life)
	return ModelTicket{Admitted: true, Probe: m.lastID, Start: now}, true
}

// admitTrickle is an admission during a trip's break: the trickle's credit
// or its longest gap, and a free slot.
func (m *Model) admitTrickle(now time.Time) (ModelTicket, bool) {
	if !m.trickling {
		return ModelTicket{}, false
	}
	m.credit = min(m.credit+m.RecoveryInitial, 1)
	if m.credit < 1 && now.Sub(m.lastTrickle) < m.RecoveryTrickleEvery {
		return ModelTicket{}, false
	}
	t, ok := m.takeSlot(now)
	if ok {
		m.credit = 0
		m.lastTrickle = now
	}
	return t, ok
}

// takeProbe frees the probe slot of t and reports whether it was held and
// unexpired at now.
func (m *Model) takeProbe(now time.Time, t ModelTicket) bool {
	exp, held := m.slots[t.Probe]
	if t.Probe == 0 || !held {
		return false
	}
	delete(m.slots, t.Probe)
	return now.Before(exp)
}

// Record applies the outcome v, of duration d, of the attempt t at now.
func (m *Model) Record(now time.Time, t ModelTicket, v outcome.Verdict, d time.Duration) {
	if !t.Admitted || t.Shadow {
		return
	}
	failure := v.Kind == outcome.Transient && !v.SelfImposed
	success := v.Kind == outcome.OK && !v.SelfImposed && !v.Canceled
	switch m.state {
	case breaker.Open:
		// A fast success of a trickled probe ends the break; nothing else does.
		if m.takeProbe(now, t) && success && !m.isSlowProbe(now, d) {
			m.transition(breaker.HalfOpen, breaker.CauseTrickle)
			m.successes, m.slowProbes = 1, 0
			if m.successes >= m.ProbeSuccesses {
				m.startRamp(now, breaker.CauseProbesSucceeded)
			}
		}
		return
	case breaker.Isolated:
		return
	case breaker.HalfOpen:
		if !m.takeProbe(now, t) {
			return
		}
		switch {
		case failure:
			m.trip(now, breaker.CauseProbeFailed)
		case !success:
		case m.isSlowProbe(now, d):
			// A lead of ProbeSlowLead slow probes over fast ones re-opens.
			m.slowProbes++
			if m.slowProbes-m.successes < m.ProbeSlowLead {
				break
			}
			if m.RecoveryOn {
				m.startRamp(now, breaker.CauseProbeSlow)
				m.hold(now)
				break
			}
			m.trip(now, breaker.CauseProbeSlow)
		default:
			// A lead of ProbeSuccesses fast probes over slow ones closes.
			m.successes++
			if m.successes-m.slowProbes < m.ProbeSuccesses {
				break
			}
			if m.RecoveryOn {
				m.startRamp(now, breaker.CauseProbesSucceeded)
				break
			}
			m.transition(breaker.Closed, breaker.CauseProbesSucceeded)
			m.trips = 0
			m.recovered, m.closedAt = true, now
			m.clear()
		}
		return
	case breaker.Recovering:
		if m.rampFraction(now) < 1 {
			m.recordRamp(now, t, failure, success, d)
			return
		}
		m.closeRamp(now) // ran out: the outcome lands in a closed breaker
	}
	if !failure && !success {
		return
	}
	// Judged against the normal latency before this sample; then the sample joins
	// the baselines and the trip window.
	slow := m.isSlow(now, d)
	if failure {
		m.failures++
	} else {
		m.failures = 0
		if m.SlowCallsOn {
			m.latencies.Add(now.Sub(m.Origin), d)
		}
	}
	if m.FailuresOn {
		m.outcomes = append(m.outcomes, outcomeAt{at: now, failure: failure})
	}
	m.samples = append(m.samples, sample{bucket: m.bucket(now), failure: failure, slow: slow})
	calls, failures, slows := m.tripWindowCounts(now)
	ratio := func(n int) float64 { return float64(n) / float64(calls) }
	point, relative := m.relativePoint(now)
	switch {
	case m.failures >= m.Consecutive:
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
func (m *Model) tripWindowCounts(now time.Time) (calls, failures, slow int) {
	for _, s := range m.samples {
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
func (m *Model) bucket(t time.Time) int64 {
	width := m.TripWindow / time.Duration(m.Buckets)
	if t.Before(m.Origin) {
		return 0
	}
	return int64(t.Sub(m.Origin) / width)
}

func (m *Model) trip(now time.Time, cause breaker.Cause) {
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
	m.openedAt, m.recovered = now, false
	m.trickling, m.lastTrickle, m.credit = m.RecoveryTrickleEvery > 0, now, 0
	m.transition(breaker.Open, cause)
	m.Transitions[len(m.Transitions)-1].Break = m.served
	m.clear()
}

// transition moves the model to state to, and lists the change.
func (m *Model) transition(to breaker.State, cause breaker.Cause) {
	m.Transitions = append(m.Transitions, breaker.Transition{From: m.state, To: to, Cause: cause, Shadow: m.Shadow})
	m.state = to
}

// clear forgets the trip window, the failure run and the probes; never the
// baselines.
func (m *Model) clear() {
	m.failures, m.successes, m.slowProbes, m.samples = 0, 0, 0, nil
	clear(m.slots)
}

// Isolate applies Breaker.Isolate.
func (m *Model) Isolate() {
	if m.state != breaker.Isolated {
		m.transition(breaker.Isolated, breaker.CauseIsolate)
		m.clear()
	}
}

// IsolateFor applies Breaker.IsolateFor(d) at now: Open for exactly d, from
// any state, without counting a trip.
func (m *Model) IsolateFor(now time.Time, d time.Duration) {
	if m.state == breaker.Recovering && m.rampFraction(now) >= 1 {
		m.closeRamp(now) // it read Closed: close it first, as an admission would
	}
	m.served = d
	m.until = now.Add(d)
	m.trickling, m.openedAt = false, now
	m.transition(breaker.Open, breaker.CauseForced)
	m.Transitions[len(m.Transitions)-1].Break = d
	m.clear()
}

// SetShadow applies Breaker.SetShadow(on).
func (m *Model) SetShadow(on bool) { m.Shadow = on }

// Reset applies Breaker.Reset.
func (m *Model) Reset() {
	if m.state != breaker.Closed {
		m.transition(breaker.Closed, breaker.CauseReset)
	}
	m.trips, m.recovered = 0, false
	m.nominal, m.served, m.until = 0, 0, time.Time{}
	m.clear()
}

package breaker

import (
	"math"
	"time"

	conf "github.com/resilience-go/pipeline/internal/breakerconf"
)

// SlowCalls configures the measured normal latency. The breaker keeps a
// histogram of the latency of its successful attempts over Window, and reads its
// Quantile as the dependency's normal latency; a call is slow when it takes
// longer than Multiple times that, or than Config.SlowCallThreshold if that is
// set and lower. With fewer than MinimumSamples successes in the window there is
// no normal ("none") and only the constant threshold applies. The slow-call trip
// (Config.SlowCallRatio over the trip window) then works with either threshold.
//
// The zero value is on, with every default: the median of 5 minutes of
// successes, 3 times over, from 20 samples. Quantile times Window must be at
// least twice SlowCallRatio times TripWindow (see the package documentation).
// A SlowCalls left at its zero value never turns the caller's own TripWindow or
// SlowCallRatio into an error: when 5 minutes would lose that race, its window
// widens to the shortest that wins it, and if that would exceed
// 1 h it steps aside (the measurement is off). A
// SlowCalls with any field set that loses the race is refused.
type SlowCalls struct {
	// Disabled turns the measurement off: no histogram is kept, NormalLatency
	// reports none, and only Config.SlowCallThreshold makes a call slow.
	Disabled bool
	// Multiple is how many times the normal latency makes a call slow. Zero means
	// 3; otherwise it must be a finite number above 1.
	Multiple float64
	// Quantile is the quantile of successful latencies read as normal. Zero means
	// 0.5; otherwise it must lie in (0, 0.5]. A low
	// quantile is what lets the normal remember a healthy dependency through a
	// brownout: the median only moves once slow calls fill half the window.
	Quantile float64
	// Window is how far back the normal latency looks, in 10 slices.
	// Zero means 5 min; otherwise it must be at least 10 nanoseconds.
	Window time.Duration
	// MinimumSamples is how many successes the window must hold before the
	// measured threshold is armed. Zero means 20.
	MinimumSamples int
}

// Failures configures the relative failure ratio. The breaker keeps the failure
// rate of its evidence samples over Window as the dependency's normal failure
// rate, and the relative trip opens it when the trip window's failure ratio
// reaches the effective trip point
//
//	min(Config.FailureRatio, or 1 if unset; max(Floor, Multiple × normal rate))
//
// with at least Config.MinimumCalls samples and at least two failures in the trip
// window. With fewer than MinimumSamples samples in the baseline there is no
// normal ("none") and the relative trip is disarmed.
//
// The zero value is on, with every default: 5 times the failure rate, never below
// 5%, over a window derived from the trip window, from 100 samples. Window
// divided by Multiple must be at least twice TripWindow (see the package
// documentation).
type Failures struct {
	// Disabled turns the relative trip off: no baseline is kept and
	// NormalFailureRate reports none.
	Disabled bool
	// Multiple is how many times the normal failure rate trips. Zero means
	// 5; otherwise it must be a finite number above 1.
	Multiple float64
	// Floor is the lowest trip point, however low the normal rate. Zero means
	// 0.05; otherwise it must lie in (0, 1].
	Floor float64
	// MinimumSamples is how many evidence samples the baseline must hold before
	// the relative trip is armed. Zero means 100.
	MinimumSamples int
	// Window is how far back the normal failure rate looks, in 10
	// buckets. Zero derives it as 2 × Config.TripWindow × Multiple (5 min at the
	// defaults), the shortest window that wins the race against the trip window.
	// If that would exceed 1 h, a Failures left at its
	// zero value steps aside (the relative trip is off), and any other is refused.
	Window time.Duration
}

// settings checks sc and fills in s's latency-baseline fields.
func (sc SlowCalls) settings(s *settings, p *problems) {
	s.slowCalls = !sc.Disabled
	s.slowMult = p.multiple("SlowCalls.Multiple", sc.Multiple, conf.DefaultSlowCallsMultiple)
	s.slowQ = sc.Quantile
	if math.IsNaN(sc.Quantile) || sc.Quantile < 0 || sc.Quantile > conf.MaxSlowCallsQuantile {
		p.add("SlowCalls.Quantile must lie in (0, %v] (0 means the default %v; it is capped at the median, "+
			"since a higher quantile follows a brownout instead of remembering healthy latency), got %v",
			conf.MaxSlowCallsQuantile, conf.DefaultSlowCallsQuantile, sc.Quantile)
	}
	if s.slowQ == 0 {
		s.slowQ = conf.DefaultSlowCallsQuantile
	}
	s.slowWindow = p.duration("SlowCalls.Window", sc.Window, conf.DefaultSlowCallsWindow)
	if s.slowWindow > 0 && s.slowWindow < conf.BaselineSlices {
		p.add("SlowCalls.Window must be at least %d nanoseconds (one per slice), got %v", conf.BaselineSlices, s.slowWindow)
	}
	s.slowMinimum = p.count("SlowCalls.MinimumSamples", sc.MinimumSamples, conf.DefaultSlowCallsMinimumSamples)
}

// settings checks f and fills in s's failure-baseline fields, except a derived
// window, which needs the trip window (see failureRace).
func (f Failures) settings(s *settings, p *problems) {
	s.relative = !f.Disabled
	s.failMult = p.multiple("Failures.Multiple", f.Multiple, conf.DefaultFailuresMultiple)
	s.failFloor = f.Floor
	if math.IsNaN(f.Floor) || f.Floor < 0 || f.Floor > 1 {
		p.add("Failures.Floor must lie in (0, 1] (0 means the default %v), got %v", conf.DefaultFailuresFloor, f.Floor)
	}
	if s.failFloor == 0 {
		s.failFloor = conf.DefaultFailuresFloor
	}
	s.failMinimum = p.count("Failures.MinimumSamples", f.MinimumSamples, conf.DefaultFailuresMinimumSamples)
	s.failWindow = f.Window
	if f.Window < 0 {
		p.add("Failures.Window must not be negative (0 derives it from TripWindow), got %v", f.Window)
	} else if f.Window > 0 && f.Window < conf.BaselineSlices {
		p.add("Failures.Window must be at least %d nanoseconds (one per bucket), got %v", conf.BaselineSlices, f.Window)
	}
	p.longest("Failures.Window", f.Window)
}

// latencyRace widens a zero-valued SlowCalls's window, or refuses a latency
// baseline that a brownout would overwrite before the trip window fills with it: the trip window needs SlowCallRatio × TripWindow
// of slow calls to trip, and the Quantile of the baseline survives
// Quantile × Window of them; the second must be at least twice the first.
func (s *settings) latencyRace(sc SlowCalls, p *problems) {
	if !s.slowCalls {
		return
	}
	survives := s.slowQ * float64(s.slowWindow)
	fills := s.slowRatio * float64(s.tripWindow)
	if survives < 2*fills && sc == (SlowCalls{}) {
		// A default the caller never wrote widens, or steps aside.
		widened := math.Ceil(2 * fills / s.slowQ)
		if widened > float64(conf.MaxWidenedSlowCallsWindow) {
			s.slowCalls = false
			return
		}
		s.slowWindow = time.Duration(widened)
		return
	}
	if survives < 2*fills {
		p.add("SlowCalls.Quantile × SlowCalls.Window (%v × %v = %v) must be at least "+
			"2 × SlowCallRatio × TripWindow (2 × %v × %v = %v): the normal latency would follow a brownout "+
			"before the trip window fills with it; lengthen SlowCalls.Window, raise SlowCalls.Quantile "+
			"(up to 0.5), lower SlowCallRatio, shorten TripWindow, or set SlowCalls.Disabled",
			s.slowQ, s.slowWindow, time.Duration(survives), s.slowRatio, s.tripWindow, time.Duration(2*fills))
	}
}

// failureRace derives a zero Failures.Window, and refuses a failure baseline that
// an outage would contaminate before the trip window turns over to failures: the
// trip window turns over in TripWindow, and after Window / Multiple of failures
// the trip point reaches 1; the second must be at least twice the first. A derived
// window meets it exactly.
func (s *settings) failureRace(f Failures, p *problems) {
	if !s.relative {
		return
	}
	if f.Window == 0 {
		derived := 2 * float64(s.tripWindow) * s.failMult
		if derived > float64(conf.MaxDerivedFailuresWindow) {
			if f == (Failures{}) {
				s.relative = false // a default the caller never wrote steps aside
				return
			}
			p.add("Failures.Window, derived as 2 × TripWindow × Failures.Multiple (2 × %v × %v), would be %v, "+
				"more than %v; set Failures.Window, lower Failures.Multiple or TripWindow, or set Failures.Disabled",
				s.tripWindow, s.failMult, time.Duration(derived), conf.MaxDerivedFailuresWindow)
			return
		}
		s.failWindow = max(time.Duration(math.Ceil(derived)), conf.BaselineSlices)
		return
	}
	survives := float64(s.failWindow) / s.failMult
	if survives < 2*float64(s.tripWindow) {
		p.add("Failures.Window / Failures.Multiple (%v / %v = %v) must be at least 2 × TripWindow (2 × %v = %v): "+
			"an outage would lift the normal failure rate out of reach before the trip window turns over to "+
			"failures; lengthen Failures.Window, lower Failures.Multiple, shorten TripWindow, "+
			"or leave Failures.Window 0 to derive it",
			s.failWindow, s.failMult, time.Duration(survives), s.tripWindow, 2*s.tripWindow)
	}
}

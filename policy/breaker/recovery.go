package breaker

import (
	"math"
	"time"

	conf "github.com/resilience-go/pipeline/internal/breakerconf"
)

// Recovery configures how a breaker comes back from a trip: a trickle of
// probes during the break, and a recovery ramp after it. Set Config.Recovery
// to &Recovery{} for the defaults; a nil Config.Recovery (the default) means
// neither: the break refuses everything, and the breaker closes at once when
// its probes succeed.
//
// The trickle. During a break that a trip started, the breaker lets through,
// as probes, Initial of the attempts offered to it (deficit accounting) and at
// least one every TrickleEvery, never more at once than Config.HalfOpenProbes.
// A probe that succeeds fast ends the break there: the breaker is HalfOpen
// with one fast probe counted. A failed or slow one changes nothing: the break
// goes on as it was. So the breaker learns within about a second that the
// dependency is back, however long its break, and the dependency is never
// left without traffic, which is what lets a cache, a pool or an autoscaler
// behind it stay warm. A break started by [Breaker.IsolateFor] lets nothing
// through.
//
// The ramp. Instead of closing when its probes succeed, the breaker becomes
// Recovering and admits a fraction p of the attempts offered to it, refusing
// the rest as an open breaker does, until p reaches 1 and it closes. p climbs
// linearly from Initial to 1 over the ramp's length: Fraction of the time the
// breaker was open, clamped to [Minimum, Maximum]. The ramp answers what its
// attempts show, as a congestion window does:
//   - a slow call (by the slow-call trip's own threshold) holds p where it
//     stands, until Config.ProbeSuccesses fast successes in a row release it;
//   - a failure is a setback: p halves (not below Initial) and the ramp's
//     length doubles (not beyond Maximum), so that p climbs again from there,
//     more slowly. Attempts admitted before the setback cause no other one:
//     they were sent at the fraction it corrected;
//   - Config.ConsecutiveFailures failures in a row re-open the breaker, with
//     the grown break.
//
// Admission is deficit accounting, not chance: every offered attempt adds p
// to a credit, and an attempt is admitted when the credit reaches 1, which it
// then pays. See docs/breaker.md for the measurements behind these rules.
type Recovery struct {
	// Fraction is the ramp's length as a fraction of the time the breaker was
	// open. Zero means 0.25; otherwise it must lie in
	// (0, 1].
	Fraction float64
	// Initial is the fraction the ramp starts at and never falls below, and
	// the share of the offered attempts the trickle lets through. Zero means
	// 0.05; otherwise it must lie in (0, 1): at 1
	// there would be no ramp.
	Initial float64
	// Minimum is the shortest ramp. Zero means 1 s, or
	// Maximum if that is set and shorter; it must not be negative.
	Minimum time.Duration
	// Maximum is the longest ramp. Zero means 30 s, or
	// Minimum if that is longer; it must not be negative nor shorter than
	// Minimum.
	Maximum time.Duration
	// TrickleEvery is the longest an open breaker goes, during a trip's break,
	// without letting a probe through. Zero means 1 s; a
	// negative value turns the trickle off, so that the break refuses
	// everything (the ramp is unchanged).
	TrickleEvery time.Duration
}

// settings checks r and fills in s's ramp fields. A nil r is no ramp.
func (r *Recovery) settings(s *settings, p *problems) {
	if r == nil {
		return
	}
	s.ramp = true
	s.rampFraction = r.Fraction
	if math.IsNaN(r.Fraction) || r.Fraction < 0 || r.Fraction > 1 {
		p.add("Recovery.Fraction must lie in (0, 1] (0 means the default %v), got %v", conf.DefaultRecoveryFraction, r.Fraction)
	}
	if s.rampFraction == 0 {
		s.rampFraction = conf.DefaultRecoveryFraction
	}
	s.rampInitial = r.Initial
	if math.IsNaN(r.Initial) || r.Initial < 0 || r.Initial >= 1 {
		p.add("Recovery.Initial must lie in (0, 1) (0 means the default %v; 1 would admit everything at once, "+
			"which is no ramp: leave Config.Recovery nil for that), got %v", conf.DefaultRecoveryInitial, r.Initial)
	}
	if s.rampInitial == 0 {
		s.rampInitial = conf.DefaultRecoveryInitial
	}
	s.rampMin, s.rampMax = r.Minimum, r.Maximum
	if r.Minimum < 0 {
		p.add("Recovery.Minimum must not be negative (0 means the default %v), got %v", conf.DefaultRecoveryMinimum, r.Minimum)
	}
	p.longest("Recovery.Minimum", r.Minimum)
	if r.Maximum < 0 {
		p.add("Recovery.Maximum must not be negative (0 means the default %v), got %v", conf.DefaultRecoveryMaximum, r.Maximum)
	}
	p.longest("Recovery.Maximum", r.Maximum)
	switch {
	case r.TrickleEvery == 0:
		s.trickleEvery = conf.DefaultTrickleEvery
	case r.TrickleEvery > 0:
		s.trickleEvery = r.TrickleEvery
		p.longest("Recovery.TrickleEvery", r.TrickleEvery)
	}
	switch {
	case s.rampMin == 0 && s.rampMax == 0:
		s.rampMin, s.rampMax = conf.DefaultRecoveryMinimum, conf.DefaultRecoveryMaximum
	case s.rampMin == 0: // a default never contradicts the field that was set
		s.rampMin = min(conf.DefaultRecoveryMinimum, s.rampMax)
	case s.rampMax == 0:
		s.rampMax = max(conf.DefaultRecoveryMaximum, s.rampMin)
	case s.rampMax < s.rampMin:
		p.add("Recovery.Maximum must not be shorter than Recovery.Minimum, got Maximum %v with Minimum %v",
			s.rampMax, s.rampMin)
	}
}

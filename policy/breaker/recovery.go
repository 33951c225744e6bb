package breaker

import (
	"math"
	"time"
)

// The defaults of a [Recovery] whose fields are zero.
const (
	// DefaultRecoveryFraction is the length of a ramp as a fraction of the break
	// that preceded it: a 15 s break ramps over 3.75 s.
	DefaultRecoveryFraction = 0.25
	// DefaultRecoveryInitial is the fraction of attempts a ramp admits when it
	// starts, the floor of its evidence term, and the step by which fast calls
	// raise that term.
	DefaultRecoveryInitial = 0.05
	// DefaultRecoveryMinimum is the shortest ramp.
	DefaultRecoveryMinimum = time.Second
	// DefaultRecoveryMaximum is the longest ramp.
	DefaultRecoveryMaximum = 30 * time.Second
)

// Recovery configures the recovery ramp: instead of closing at once when its
// probes succeed, the breaker becomes Recovering and admits a growing fraction p
// of the attempts offered to it, refusing the rest as an open breaker does, until
// p reaches 1 and it closes. Set Config.Recovery to &Recovery{} for the defaults;
// a nil Config.Recovery (the default) means no ramp.
//
// p is the smaller of two terms. The clock term climbs linearly from Initial to 1
// over the ramp's length, Fraction times the break just served, clamped to
// [Minimum, Maximum]. The evidence term starts at 1 and is AIMD on the speed of
// the attempts the ramp admits, judged by the same effective slow-call threshold
// as the slow-call trip: a slow call halves the admitted fraction p (not below
// Initial) and the evidence term holds it there; Config.ProbeSuccesses fast
// successes in a row add Initial back (up to 1). Admission is deficit
// accounting, not chance: every offered attempt adds p to a credit, and an
// attempt is admitted when the credit reaches 1, which it then pays. See the
// package documentation for the rules of a ramp.
type Recovery struct {
	// Fraction is the ramp's length as a fraction of the break just served. Zero
	// means DefaultRecoveryFraction (0.25); otherwise it must lie in (0, 1].
	Fraction float64
	// Initial is the fraction the ramp starts at, the floor of its evidence term,
	// and the step that fast calls add to it. Zero means DefaultRecoveryInitial
	// (0.05); otherwise it must lie in (0, 1): at 1 there would be no ramp.
	Initial float64
	// Minimum is the shortest ramp. Zero means DefaultRecoveryMinimum (1 s), or
	// Maximum if that is set and shorter; it must not be negative.
	Minimum time.Duration
	// Maximum is the longest ramp. Zero means DefaultRecoveryMaximum (30 s), or
	// Minimum if that is longer; it must not be negative nor shorter than
	// Minimum.
	Maximum time.Duration
}

// settings checks r and fills in s's ramp fields. A nil r is no ramp.
func (r *Recovery) settings(s *settings, p *problems) {
	if r == nil {
		return
	}
	s.ramp = true
	s.rampFraction = r.Fraction
	if math.IsNaN(r.Fraction) || r.Fraction < 0 || r.Fraction > 1 {
		p.add("Recovery.Fraction must lie in (0, 1] (0 means the default %v), got %v", DefaultRecoveryFraction, r.Fraction)
	}
	if s.rampFraction == 0 {
		s.rampFraction = DefaultRecoveryFraction
	}
	s.rampInitial = r.Initial
	if math.IsNaN(r.Initial) || r.Initial < 0 || r.Initial >= 1 {
		p.add("Recovery.Initial must lie in (0, 1) (0 means the default %v; 1 would admit everything at once, "+
			"which is no ramp: leave Config.Recovery nil for that), got %v", DefaultRecoveryInitial, r.Initial)
	}
	if s.rampInitial == 0 {
		s.rampInitial = DefaultRecoveryInitial
	}
	s.rampMin, s.rampMax = r.Minimum, r.Maximum
	if r.Minimum < 0 {
		p.add("Recovery.Minimum must not be negative (0 means the default %v), got %v", DefaultRecoveryMinimum, r.Minimum)
	}
	p.longest("Recovery.Minimum", r.Minimum)
	if r.Maximum < 0 {
		p.add("Recovery.Maximum must not be negative (0 means the default %v), got %v", DefaultRecoveryMaximum, r.Maximum)
	}
	p.longest("Recovery.Maximum", r.Maximum)
	switch {
	case s.rampMin == 0 && s.rampMax == 0:
		s.rampMin, s.rampMax = DefaultRecoveryMinimum, DefaultRecoveryMaximum
	case s.rampMin == 0: // a default never contradicts the field that was set
		s.rampMin = min(DefaultRecoveryMinimum, s.rampMax)
	case s.rampMax == 0:
		s.rampMax = max(DefaultRecoveryMaximum, s.rampMin)
	case s.rampMax < s.rampMin:
		p.add("Recovery.Maximum must not be shorter than Recovery.Minimum, got Maximum %v with Minimum %v",
			s.rampMax, s.rampMin)
	}
}

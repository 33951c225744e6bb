package breakertest

import (
	"math"
	"time"

	"pgregory.net/rapid"

	"github.com/resilience-go/pipeline/internal/breakerconf"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/breaker"
)

// Configs generates valid breaker configurations small enough that random
// operations reach every state: a few failures trip them, breaks last
// milliseconds to seconds, ratio and slow-call trips are sometimes on, and the
// measured normals are on or off with baselines of a few samples over windows
// short enough to decay, always winning their races against the trip window,
// and half of them have a recovery ramp (see [Recoveries]). Clock, Rand and
// OnEvent are left nil, and Shadow false: [StateMachine] switches shadow mode
// on and off as it runs, and a property that wants a shadow breaker sets it.
func Configs() *rapid.Generator[breaker.Config] {
	return rapid.Custom(func(t *rapid.T) breaker.Config {
		c := breaker.Config{
			ConsecutiveFailures: rapid.IntRange(0, 6).Draw(t, "ConsecutiveFailures"),
			MinimumCalls:        rapid.IntRange(0, 8).Draw(t, "MinimumCalls"),
			TripWindow:          rapid.SampledFrom([]time.Duration{0, time.Second, 10 * time.Second}).Draw(t, "TripWindow"),
			WindowBuckets:       rapid.IntRange(0, 10).Draw(t, "WindowBuckets"),
			BreakDuration:       rapid.SampledFrom([]time.Duration{0, time.Millisecond, time.Second, 5 * time.Second}).Draw(t, "BreakDuration"),
			BreakJitter:         rapid.SampledFrom([]breaker.Jitter{breaker.JitterEqual, breaker.JitterFull, breaker.JitterNone}).Draw(t, "BreakJitter"),
			HalfOpenProbes:      rapid.IntRange(0, 3).Draw(t, "HalfOpenProbes"),
			ProbeSuccesses:      rapid.IntRange(0, 3).Draw(t, "ProbeSuccesses"),
			ProbeSlowLead:       rapid.IntRange(0, 3).Draw(t, "ProbeSlowLead"),
			ProbeSlowFraction:   rapid.SampledFrom([]float64{0, 0.1, 0.5, 0.7, 0.99, 1}).Draw(t, "ProbeSlowFraction"),
		}
		if rapid.Bool().Draw(t, "failure ratio on") {
			c.FailureRatio = rapid.Float64Range(0.05, 1).Draw(t, "FailureRatio")
		}
		if rapid.Bool().Draw(t, "slow calls on") {
			c.SlowCallThreshold = rapid.SampledFrom([]time.Duration{time.Millisecond, 100 * time.Millisecond, time.Second}).Draw(t, "SlowCallThreshold")
			c.SlowCallRatio = rapid.Float64Range(0, 1).Draw(t, "SlowCallRatio")
		}
		c.SlowCalls = slowCalls(t, c)
		c.Failures = failures(t, c)
		if rapid.Bool().Draw(t, "ramp on") {
			c.Recovery = Recoveries().Draw(t, "Recovery")
		}
		if rapid.Bool().Draw(t, "max break set") {
			base := c.BreakDuration
			if base == 0 {
				base = breakerconf.DefaultBreakDuration
			}
			c.MaxBreakDuration = base * time.Duration(rapid.IntRange(1, 8).Draw(t, "max break factor"))
		}
		return c
	})
}

// Recoveries generates valid recovery ramps: sometimes every default, otherwise
// fractions and initial shares from small to large, and bounds from a
// millisecond to the defaults, so that ramps last from a millisecond to 30 s.
func Recoveries() *rapid.Generator[*breaker.Recovery] {
	return rapid.Custom(func(t *rapid.T) *breaker.Recovery {
		if rapid.IntRange(0, 3).Draw(t, "Recovery default") == 0 {
			return &breaker.Recovery{}
		}
		r := &breaker.Recovery{
			Fraction: rapid.SampledFrom([]float64{0, 0.1, 0.25, 1}).Draw(t, "Recovery.Fraction"),
			Initial:  rapid.SampledFrom([]float64{0, 0.01, 0.05, 0.25, 0.5, 0.9}).Draw(t, "Recovery.Initial"),
			Minimum:  rapid.SampledFrom([]time.Duration{0, time.Millisecond, 100 * time.Millisecond, time.Second}).Draw(t, "Recovery.Minimum"),
		}
		if rapid.Bool().Draw(t, "Recovery.Maximum set") {
			least := max(r.Minimum, time.Millisecond)
			r.Maximum = least * time.Duration(rapid.IntRange(1, 30).Draw(t, "Recovery.Maximum factor"))
		}
		return r
	})
}

// slowCalls draws a SlowCalls for c that wins the latency race.
func slowCalls(t *rapid.T, c breaker.Config) breaker.SlowCalls {
	if rapid.IntRange(0, 3).Draw(t, "SlowCalls default") == 0 {
		return breaker.SlowCalls{}
	}
	sc := breaker.SlowCalls{
		Disabled:       rapid.IntRange(0, 3).Draw(t, "SlowCalls.Disabled") == 0,
		Multiple:       rapid.SampledFrom([]float64{0, 1.5, 3, 10}).Draw(t, "SlowCalls.Multiple"),
		Quantile:       rapid.SampledFrom([]float64{0, 0.1, 0.25, 0.5}).Draw(t, "SlowCalls.Quantile"),
		MinimumSamples: rapid.IntRange(0, 5).Draw(t, "SlowCalls.MinimumSamples"),
	}
	q, ratio, trip := sc.Quantile, c.SlowCallRatio, c.TripWindow
	if q == 0 {
		q = breakerconf.DefaultSlowCallsQuantile
	}
	if ratio == 0 {
		ratio = breakerconf.DefaultSlowCallRatio
	}
	if trip == 0 {
		trip = breakerconf.DefaultTripWindow
	}
	// The shortest window that wins the race, a few times over.
	least := max(time.Duration(math.Ceil(2*ratio*float64(trip)/q)), time.Second)
	sc.Window = least * time.Duration(rapid.IntRange(1, 4).Draw(t, "SlowCalls.Window factor"))
	return sc
}

// failures draws a Failures for c that wins the failure race.
func failures(t *rapid.T, c breaker.Config) breaker.Failures {
	if rapid.IntRange(0, 3).Draw(t, "Failures default") == 0 {
		return breaker.Failures{}
	}
	f := breaker.Failures{
		Disabled:       rapid.IntRange(0, 3).Draw(t, "Failures.Disabled") == 0,
		Multiple:       rapid.SampledFrom([]float64{0, 1.5, 2, 5}).Draw(t, "Failures.Multiple"),
		Floor:          rapid.SampledFrom([]float64{0, 0.01, 0.1, 0.5}).Draw(t, "Failures.Floor"),
		MinimumSamples: rapid.SampledFrom([]int{0, 1, 2, 5, 10}).Draw(t, "Failures.MinimumSamples"),
	}
	if rapid.Bool().Draw(t, "Failures.Window set") {
		mult, trip := f.Multiple, c.TripWindow
		if mult == 0 {
			mult = breakerconf.DefaultFailuresMultiple
		}
		if trip == 0 {
			trip = breakerconf.DefaultTripWindow
		}
		least := time.Duration(math.Ceil(2 * mult * float64(trip)))
		f.Window = least * time.Duration(rapid.IntRange(1, 3).Draw(t, "Failures.Window factor"))
	}
	return f
}

// Verdicts generates every kind of verdict, including self-imposed and canceled
// ones and retry-after hints, weighted towards successes and failures.
func Verdicts() *rapid.Generator[outcome.Verdict] {
	return rapid.Custom(func(t *rapid.T) outcome.Verdict {
		switch rapid.IntRange(0, 9).Draw(t, "verdict") {
		case 0:
			return outcome.Verdict{Kind: outcome.Throttled}.WithRetryAfter(time.Second)
		case 1:
			return outcome.Verdict{Kind: outcome.Permanent}
		case 2:
			return outcome.Verdict{Kind: outcome.Permanent, Canceled: true}
		case 3:
			return outcome.Verdict{Kind: outcome.Throttled, SelfImposed: true}
		case 4, 5, 6:
			return outcome.Verdict{Kind: outcome.Transient}
		}
		return outcome.Verdict{}
	})
}

// Durations generates attempt durations from zero to a few seconds, so that
// slow-call thresholds of a millisecond to a second are crossed both ways.
func Durations() *rapid.Generator[time.Duration] {
	return rapid.SampledFrom([]time.Duration{
		0, time.Microsecond, time.Millisecond, 50 * time.Millisecond,
		100 * time.Millisecond, time.Second, 1500 * time.Millisecond, 3 * time.Second,
	})
}

// Advances generates clock advances, from a nanosecond to a few minutes.
func Advances() *rapid.Generator[time.Duration] {
	return rapid.OneOf(
		rapid.SampledFrom([]time.Duration{time.Nanosecond, time.Millisecond, time.Second, 3 * time.Second, 15 * time.Second, time.Minute, 3 * time.Minute}),
		rapid.Map(rapid.Int64Range(1, int64(30*time.Second)), func(v int64) time.Duration { return time.Duration(v) }),
	)
}

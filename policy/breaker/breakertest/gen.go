package breakertest

import (
	"time"

	"pgregory.net/rapid"

	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/breaker"
)

// Configs generates valid breaker configurations small enough that random
// operations reach every state: a few failures trip them, breaks last
// milliseconds to seconds, and ratio and slow-call trips are sometimes on. Clock,
// Rand and OnEvent are left nil.
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
		}
		if rapid.Bool().Draw(t, "failure ratio on") {
			c.FailureRatio = rapid.Float64Range(0.05, 1).Draw(t, "FailureRatio")
		}
		if rapid.Bool().Draw(t, "slow calls on") {
			c.SlowCallThreshold = rapid.SampledFrom([]time.Duration{time.Millisecond, 100 * time.Millisecond, time.Second}).Draw(t, "SlowCallThreshold")
			c.SlowCallRatio = rapid.Float64Range(0, 1).Draw(t, "SlowCallRatio")
		}
		if rapid.Bool().Draw(t, "max break set") {
			base := c.BreakDuration
			if base == 0 {
				base = breaker.DefaultBreakDuration
			}
			c.MaxBreakDuration = base * time.Duration(rapid.IntRange(1, 8).Draw(t, "max break factor"))
		}
		return c
	})
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

// Package breakerconf holds the circuit breaker's defaults and bounds: the
// values its zero Config fields stand for (each field's doc gives its
// value), and the limits New checks. They live here, not in package breaker,
// because only the breaker, its test kit, the simulation and the benchmarks
// read them by name; a user reads the values in the docs.
package breakerconf

import "time"

// The defaults a zero Config field stands for.
const (
	// DefaultConsecutiveFailures is how many failures in a row open a closed
	// breaker.
	DefaultConsecutiveFailures = 5
	// DefaultMinimumCalls is how many evidence samples the trip window must hold
	// before a ratio trip (failure ratio or slow-call ratio) may open the breaker.
	DefaultMinimumCalls = 20
	// DefaultTripWindow is how far back the ratio trips look.
	DefaultTripWindow = 30 * time.Second
	// DefaultWindowBuckets is how many buckets the trip window is divided into; the
	// window slides one bucket (3 s at the defaults) at a time.
	DefaultWindowBuckets = 10
	// DefaultSlowCallRatio is the fraction of slow samples in the trip window that
	// opens the breaker, when a slow-call threshold is set or measured.
	DefaultSlowCallRatio = 0.5
	// DefaultBreakDuration is the first break after a trip.
	DefaultBreakDuration = 15 * time.Second
	// DefaultMaxBreakDuration caps the break as it doubles with consecutive trips.
	DefaultMaxBreakDuration = 2 * time.Minute
	// DefaultHalfOpenProbes is how many probes may be in flight at once.
	DefaultHalfOpenProbes = 1
	// DefaultProbeSuccesses is the lead of fast probes over slow ones that
	// closes a half-open breaker: with no slow probe, two successful probes.
	DefaultProbeSuccesses = 2
	// DefaultProbeSlowLead is the lead of slow probes over fast ones that
	// re-opens a half-open breaker.
	DefaultProbeSlowLead = 4
	// DefaultProbeSlowFraction is the fraction of the effective slow-call
	// threshold above which a probe counts as slow: with the default measured
	// normal, 2.1 times the median.
	DefaultProbeSlowFraction = 0.7
	// MaxWindowBuckets is the most buckets a trip window may have.
	MaxWindowBuckets = 1000
	// MaxHalfOpenProbes is the most probe slots a breaker may have. New
	// allocates them all, and every half-open admission scans them under the
	// breaker's lock; a thousand attempts at once is no longer a probe.
	MaxHalfOpenProbes = 1000
)

// The defaults of the measured normals, and their limits.
const (
	// DefaultSlowCallsMultiple is how many times the normal latency a call must
	// take to be slow.
	DefaultSlowCallsMultiple = 3.0
	// DefaultSlowCallsQuantile is the quantile of successful latencies that is
	// "normal": the median.
	DefaultSlowCallsQuantile = 0.5
	// MaxSlowCallsQuantile is the highest quantile SlowCalls accepts. A higher one
	// follows a brownout instead of remembering what healthy looked like.
	MaxSlowCallsQuantile = 0.5
	// DefaultSlowCallsWindow is how far back the normal latency looks.
	DefaultSlowCallsWindow = 5 * time.Minute
	// DefaultSlowCallsMinimumSamples is how many successful attempts the latency
	// baseline needs before the measured threshold is armed.
	DefaultSlowCallsMinimumSamples = 20

	// DefaultFailuresMultiple is how many times its normal failure rate the trip
	// window must reach for the relative trip to open the breaker.
	DefaultFailuresMultiple = 5.0
	// DefaultFailuresFloor is the lowest relative trip point: below a 5% failure
	// ratio nothing is wrong, however quiet the dependency usually is.
	DefaultFailuresFloor = 0.05
	// DefaultFailuresMinimumSamples is how many evidence samples the failure
	// baseline needs before the relative trip is armed. Failures are rare, and a
	// rate measured over fewer samples would be coarser than the floor.
	DefaultFailuresMinimumSamples = 100
	// MaxDerivedFailuresWindow is the longest failure baseline a zero
	// Failures.Window may be derived to (see [Failures]).
	MaxDerivedFailuresWindow = time.Hour
	// MaxWidenedSlowCallsWindow is the longest latency baseline a SlowCalls left
	// at its zero value may be widened to (see [SlowCalls]).
	MaxWidenedSlowCallsWindow = time.Hour

	// BaselineSlices is how many slices both baselines are cut into: they forget
	// a tenth of their window at a time.
	BaselineSlices = 10
)

// The defaults of a [Recovery] whose fields are zero.
const (
	// DefaultRecoveryFraction is the length of a ramp as a fraction of the time
	// the breaker was open: a 15 s break ramps over 3.75 s.
	DefaultRecoveryFraction = 0.25
	// DefaultRecoveryInitial is the fraction of attempts a ramp admits when it
	// starts, and never less after a setback; and the share of the attempts
	// offered during a break that the trickle lets through.
	DefaultRecoveryInitial = 0.05
	// DefaultRecoveryMinimum is the shortest ramp.
	DefaultRecoveryMinimum = time.Second
	// DefaultRecoveryMaximum is the longest ramp.
	DefaultRecoveryMaximum = 30 * time.Second
	// DefaultTrickleEvery is the longest an open breaker with a ramp goes
	// without letting a probe through.
	DefaultTrickleEvery = time.Second
)

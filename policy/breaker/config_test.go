package breaker_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	conf "github.com/resilience-go/pipeline/internal/breakerconf"
	"github.com/resilience-go/pipeline/policy/breaker"
)

func TestZeroConfigIsValid(t *testing.T) {
	require.NoError(t, breaker.Config{}.Validate())
	b, err := breaker.New(breaker.Config{})
	require.NoError(t, err)
	assert.Equal(t, breaker.Closed, b.State())
}

func TestBadConfigs(t *testing.T) {
	tests := []struct {
		name string
		cfg  breaker.Config
		want string
	}{
		{"negative consecutive", breaker.Config{ConsecutiveFailures: -1}, "breaker: Config.ConsecutiveFailures must be at least 1 (0 means the default 5), got -1"},
		{"negative probes", breaker.Config{HalfOpenProbes: -2}, "Config.HalfOpenProbes must be at least 1 (0 means the default 1), got -2"},
		{"negative probe successes", breaker.Config{ProbeSuccesses: -1}, "Config.ProbeSuccesses must be at least 1 (0 means the default 2), got -1"},
		{"negative probe slow lead", breaker.Config{ProbeSlowLead: -1}, "Config.ProbeSlowLead must be at least 1 (0 means the default 4), got -1"},
		{"probe slow fraction above 1", breaker.Config{ProbeSlowFraction: 1.5}, "Config.ProbeSlowFraction must lie in (0, 1] (0 means the default 0.7; a probe is never judged more leniently than a call), got 1.5"},
		{"probe slow fraction negative", breaker.Config{ProbeSlowFraction: -0.7}, "Config.ProbeSlowFraction must lie in (0, 1] (0 means the default 0.7; a probe is never judged more leniently than a call), got -0.7"},
		{"probe slow fraction NaN", breaker.Config{ProbeSlowFraction: math.NaN()}, "Config.ProbeSlowFraction must lie in (0, 1] (0 means the default 0.7; a probe is never judged more leniently than a call), got NaN"},
		{"negative minimum calls", breaker.Config{MinimumCalls: -5}, "Config.MinimumCalls must be at least 1 (0 means the default 20), got -5"},
		{"negative buckets", breaker.Config{WindowBuckets: -1}, "Config.WindowBuckets must be at least 1 (0 means the default 10), got -1"},
		{"too many buckets", breaker.Config{WindowBuckets: 1001}, "Config.WindowBuckets must be at most 1000, got 1001"},
		{"buckets narrower than a nanosecond", breaker.Config{TripWindow: 5, WindowBuckets: 10}, "Config.TripWindow must be at least WindowBuckets nanoseconds, got TripWindow 5ns with WindowBuckets 10"},
		{"negative window", breaker.Config{TripWindow: -time.Second}, "Config.TripWindow must not be negative (0 means the default 30s), got -1s"},
		{"negative break", breaker.Config{BreakDuration: -time.Second}, "Config.BreakDuration must not be negative (0 means the default 15s), got -1s"},
		{"negative max break", breaker.Config{MaxBreakDuration: -time.Second}, "Config.MaxBreakDuration must not be negative (0 means the default 2m0s), got -1s"},
		{"max below break", breaker.Config{BreakDuration: time.Minute, MaxBreakDuration: time.Second}, "Config.MaxBreakDuration must not be shorter than BreakDuration, got MaxBreakDuration 1s with BreakDuration 1m0s"},
		{"negative slow threshold", breaker.Config{SlowCallThreshold: -time.Millisecond}, "Config.SlowCallThreshold must not be negative (0 means off), got -1ms"},
		{"failure ratio above 1", breaker.Config{FailureRatio: 1.5}, "Config.FailureRatio must lie between 0 and 1 (0 means off), got 1.5"},
		{"failure ratio negative", breaker.Config{FailureRatio: -0.1}, "Config.FailureRatio must lie between 0 and 1 (0 means off), got -0.1"},
		{"failure ratio NaN", breaker.Config{FailureRatio: math.NaN()}, "Config.FailureRatio must lie between 0 and 1 (0 means off), got NaN"},
		{"slow ratio above 1", breaker.Config{SlowCallRatio: 2}, "Config.SlowCallRatio must lie between 0 and 1 (0 means the default 0.5), got 2"},
		{"unknown jitter", breaker.Config{BreakJitter: 7}, "Config.BreakJitter must be JitterEqual, JitterFull or JitterNone, got breaker.Jitter(7)"},

		{"slow multiple of 1", breaker.Config{SlowCalls: breaker.SlowCalls{Multiple: 1}}, "Config.SlowCalls.Multiple must be a finite number above 1 (0 means the default 3), got 1"},
		{"slow multiple negative", breaker.Config{SlowCalls: breaker.SlowCalls{Multiple: -3}}, "Config.SlowCalls.Multiple must be a finite number above 1 (0 means the default 3), got -3"},
		{"slow multiple infinite", breaker.Config{SlowCalls: breaker.SlowCalls{Multiple: math.Inf(1)}}, "Config.SlowCalls.Multiple must be a finite number above 1 (0 means the default 3), got +Inf"},
		{"slow multiple NaN", breaker.Config{SlowCalls: breaker.SlowCalls{Multiple: math.NaN()}}, "Config.SlowCalls.Multiple must be a finite number above 1 (0 means the default 3), got NaN"},
		{"slow quantile above the median", breaker.Config{SlowCalls: breaker.SlowCalls{Quantile: 0.95}}, "Config.SlowCalls.Quantile must lie in (0, 0.5] (0 means the default 0.5; it is capped at the median, since a higher quantile follows a brownout instead of remembering healthy latency), got 0.95"},
		{"slow quantile negative", breaker.Config{SlowCalls: breaker.SlowCalls{Quantile: -0.5}}, "Config.SlowCalls.Quantile must lie in (0, 0.5]"},
		{"slow quantile NaN", breaker.Config{SlowCalls: breaker.SlowCalls{Quantile: math.NaN()}}, "got NaN"},
		{"slow window negative", breaker.Config{SlowCalls: breaker.SlowCalls{Window: -time.Minute}}, "Config.SlowCalls.Window must not be negative (0 means the default 5m0s), got -1m0s"},
		{"slow window under a slice each", breaker.Config{SlowCalls: breaker.SlowCalls{Window: 5, Disabled: true}}, "Config.SlowCalls.Window must be at least 10 nanoseconds (one per slice), got 5ns"},
		{"slow samples negative", breaker.Config{SlowCalls: breaker.SlowCalls{MinimumSamples: -1}}, "Config.SlowCalls.MinimumSamples must be at least 1 (0 means the default 20), got -1"},
		{"failure multiple below 1", breaker.Config{Failures: breaker.Failures{Multiple: 0.5}}, "Config.Failures.Multiple must be a finite number above 1 (0 means the default 5), got 0.5"},
		{"floor above 1", breaker.Config{Failures: breaker.Failures{Floor: 1.5}}, "Config.Failures.Floor must lie in (0, 1] (0 means the default 0.05), got 1.5"},
		{"floor negative", breaker.Config{Failures: breaker.Failures{Floor: -0.05}}, "Config.Failures.Floor must lie in (0, 1] (0 means the default 0.05), got -0.05"},
		{"floor NaN", breaker.Config{Failures: breaker.Failures{Floor: math.NaN(), Disabled: true}}, "Config.Failures.Floor must lie in (0, 1] (0 means the default 0.05), got NaN"},
		{"failure samples negative", breaker.Config{Failures: breaker.Failures{MinimumSamples: -100}}, "Config.Failures.MinimumSamples must be at least 1 (0 means the default 100), got -100"},
		{"failure window negative", breaker.Config{Failures: breaker.Failures{Window: -time.Second}}, "Config.Failures.Window must not be negative (0 derives it from TripWindow), got -1s"},
		{"failure window under a bucket each", breaker.Config{Failures: breaker.Failures{Window: 9}}, "Config.Failures.Window must be at least 10 nanoseconds (one per bucket), got 9ns"},
		{"ramp fraction above 1", breaker.Config{Recovery: &breaker.Recovery{Fraction: 1.5}}, "breaker: Config.Recovery.Fraction must lie in (0, 1] (0 means the default 0.25), got 1.5"},
		{"ramp fraction negative", breaker.Config{Recovery: &breaker.Recovery{Fraction: -0.25}}, "Config.Recovery.Fraction must lie in (0, 1] (0 means the default 0.25), got -0.25"},
		{"ramp fraction NaN", breaker.Config{Recovery: &breaker.Recovery{Fraction: math.NaN()}}, "Config.Recovery.Fraction must lie in (0, 1] (0 means the default 0.25), got NaN"},
		{"ramp initial of 1", breaker.Config{Recovery: &breaker.Recovery{Initial: 1}}, "breaker: Config.Recovery.Initial must lie in (0, 1) (0 means the default 0.05; 1 would admit everything at once, which is no ramp: leave Config.Recovery nil for that), got 1"},
		{"ramp initial negative", breaker.Config{Recovery: &breaker.Recovery{Initial: -0.05}}, "Config.Recovery.Initial must lie in (0, 1) (0 means the default 0.05; "},
		{"ramp initial NaN", breaker.Config{Recovery: &breaker.Recovery{Initial: math.NaN()}}, "Config.Recovery.Initial must lie in (0, 1)"},
		{"ramp minimum negative", breaker.Config{Recovery: &breaker.Recovery{Minimum: -time.Second}}, "breaker: Config.Recovery.Minimum must not be negative (0 means the default 1s), got -1s"},
		{"ramp maximum negative", breaker.Config{Recovery: &breaker.Recovery{Maximum: -time.Second}}, "breaker: Config.Recovery.Maximum must not be negative (0 means the default 30s), got -1s"},
		{"ramp maximum below minimum", breaker.Config{Recovery: &breaker.Recovery{Minimum: 10 * time.Second, Maximum: 5 * time.Second}}, "breaker: Config.Recovery.Maximum must not be shorter than Recovery.Minimum, got Maximum 5s with Minimum 10s"},

		{"break that overflows the clock", breaker.Config{BreakDuration: math.MaxInt64}, "breaker: Config.BreakDuration must be at most MaxDuration (87600h0m0s, ten years), got 2562047h47m16.854775807s"},
		{"max break that overflows the clock", breaker.Config{MaxBreakDuration: math.MaxInt64}, "breaker: Config.MaxBreakDuration must be at most MaxDuration (87600h0m0s, ten years), got 2562047h47m16.854775807s"},
		{"trip window past MaxDuration", breaker.Config{TripWindow: breaker.MaxDuration + 1}, "breaker: Config.TripWindow must be at most MaxDuration (87600h0m0s, ten years), got 87600h0m0.000000001s"},
		{"slow threshold past MaxDuration", breaker.Config{SlowCallThreshold: math.MaxInt64}, "breaker: Config.SlowCallThreshold must be at most MaxDuration"},
		{"slow window past MaxDuration", breaker.Config{SlowCalls: breaker.SlowCalls{Window: math.MaxInt64}}, "breaker: Config.SlowCalls.Window must be at most MaxDuration"},
		{"failure window past MaxDuration", breaker.Config{Failures: breaker.Failures{Window: math.MaxInt64}}, "breaker: Config.Failures.Window must be at most MaxDuration"},
		{"ramp minimum past MaxDuration", breaker.Config{Recovery: &breaker.Recovery{Minimum: math.MaxInt64}}, "breaker: Config.Recovery.Minimum must be at most MaxDuration"},
		{"ramp maximum past MaxDuration", breaker.Config{Recovery: &breaker.Recovery{Maximum: math.MaxInt64}}, "breaker: Config.Recovery.Maximum must be at most MaxDuration"},
		{"probes past the slice limit", breaker.Config{HalfOpenProbes: math.MaxInt}, "breaker: Config.HalfOpenProbes must be at most 1000 (New allocates every probe slot, and each half-open admission scans them), got 9223372036854775807"},
		{"probes of 256 MiB", breaker.Config{HalfOpenProbes: 1 << 24}, "Config.HalfOpenProbes must be at most 1000"},
		{"probes past MaxHalfOpenProbes", breaker.Config{HalfOpenProbes: conf.MaxHalfOpenProbes + 1}, "Config.HalfOpenProbes must be at most 1000"},

		{"latency race: a short baseline", breaker.Config{SlowCalls: breaker.SlowCalls{Window: 50 * time.Second}},
			"breaker: Config.SlowCalls.Quantile × SlowCalls.Window (0.5 × 50s = 25s) must be at least 2 × SlowCallRatio × TripWindow (2 × 0.5 × 30s = 30s): the normal latency would follow a brownout before the trip window fills with it; lengthen SlowCalls.Window, raise SlowCalls.Quantile (up to 0.5), lower SlowCallRatio, shorten TripWindow, or set SlowCalls.Disabled"},
		{"latency race: a low quantile", breaker.Config{SlowCalls: breaker.SlowCalls{Quantile: 0.05}, SlowCallRatio: 0.9},
			"Config.SlowCalls.Quantile × SlowCalls.Window (0.05 × 5m0s = 15s) must be at least 2 × SlowCallRatio × TripWindow (2 × 0.9 × 30s = 54s)"},
		{"latency race: a long trip window, SlowCalls set", breaker.Config{TripWindow: 3 * time.Minute, Failures: breaker.Failures{Disabled: true}, SlowCalls: breaker.SlowCalls{Multiple: 4}},
			"Config.SlowCalls.Quantile × SlowCalls.Window (0.5 × 5m0s = 2m30s) must be at least 2 × SlowCallRatio × TripWindow (2 × 0.5 × 3m0s = 3m0s)"},
		{"failure race: an explicit window", breaker.Config{Failures: breaker.Failures{Window: 2 * time.Minute}},
			"breaker: Config.Failures.Window / Failures.Multiple (2m0s / 5 = 24s) must be at least 2 × TripWindow (2 × 30s = 1m0s): an outage would lift the normal failure rate out of reach before the trip window turns over to failures; lengthen Failures.Window, lower Failures.Multiple, shorten TripWindow, or leave Failures.Window 0 to derive it"},
		{"failure race: 10 × on a 5-minute baseline", breaker.Config{Failures: breaker.Failures{Multiple: 10, Window: 5 * time.Minute}},
			"Config.Failures.Window / Failures.Multiple (5m0s / 10 = 30s) must be at least 2 × TripWindow (2 × 30s = 1m0s)"},
		{"derived window over an hour, Multiple set", breaker.Config{TripWindow: 10 * time.Minute, Failures: breaker.Failures{Multiple: 5}, SlowCalls: breaker.SlowCalls{Disabled: true}},
			"breaker: Config.Failures.Window, derived as 2 × TripWindow × Failures.Multiple (2 × 10m0s × 5), would be 1h40m0s, more than 1h0m0s; set Failures.Window, lower Failures.Multiple or TripWindow, or set Failures.Disabled"},
		{"derived window over an hour, Floor set", breaker.Config{TripWindow: 10 * time.Minute, Failures: breaker.Failures{Floor: 0.1}, SlowCalls: breaker.SlowCalls{Disabled: true}},
			"Config.Failures.Window, derived as 2 × TripWindow × Failures.Multiple (2 × 10m0s × 5), would be 1h40m0s"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			b, err := breaker.New(tc.cfg)
			assert.Nil(t, b)
			assert.Error(t, err)
		})
	}
}

func TestBadConfigReportsEveryField(t *testing.T) {
	err := breaker.Config{HalfOpenProbes: -1, FailureRatio: 3, BreakDuration: -1,
		Recovery: &breaker.Recovery{Fraction: 2, Initial: 2, Minimum: -1, Maximum: -1}}.Validate()
	require.Error(t, err)
	for _, field := range []string{"HalfOpenProbes", "FailureRatio", "BreakDuration",
		"Recovery.Fraction", "Recovery.Initial", "Recovery.Minimum", "Recovery.Maximum"} {
		assert.Contains(t, err.Error(), "Config."+field)
	}
}

func TestRacesAtTheirLimits(t *testing.T) {
	for _, cfg := range []breaker.Config{
		{SlowCalls: breaker.SlowCalls{Window: time.Minute}},                             // 0.5 × 60 s = 2 × 0.5 × 30 s
		{Failures: breaker.Failures{Window: 5 * time.Minute}},                           // 300 s / 5 = 2 × 30 s: the defaults, written out
		{Failures: breaker.Failures{Multiple: 10}},                                      // derived: 10 min
		{TripWindow: 3 * time.Minute, SlowCalls: breaker.SlowCalls{Disabled: true}},     // no latency race to lose
		{TripWindow: 6 * time.Minute, SlowCalls: breaker.SlowCalls{Window: time.Hour}},  // derived: exactly 1 h
		{TripWindow: 10 * time.Minute, SlowCalls: breaker.SlowCalls{Window: time.Hour}}, // derived past 1 h: steps aside
	} {
		assert.NoError(t, cfg.Validate(), "%+v", cfg)
	}
}

// A SlowCalls the caller never configured widens its window rather than turn a
// long TripWindow into an error, and steps aside past an hour; one they
// configured does not (see TestBadConfigs).
func TestDefaultSlowCallsWidensOrStepsAside(t *testing.T) {
	for _, tc := range []struct {
		trip  time.Duration
		armed bool
	}{
		{3 * time.Minute, true},               // widened to 6 min
		{30 * time.Minute, true},              // widened to exactly 1 h
		{30*time.Minute + time.Second, false}, // past 1 h: steps aside
	} {
		cfg := breaker.Config{TripWindow: tc.trip, Failures: breaker.Failures{Disabled: true}}
		require.NoError(t, cfg.Validate(), "TripWindow %v", tc.trip)
		r := newRig(t, cfg)
		r.serve(30, ok, time.Millisecond, time.Second)
		_, known := r.b.NormalLatency()
		assert.Equal(t, tc.armed, known, "TripWindow %v", tc.trip)
	}
	// The widened window holds what the default would have dropped: 5 min of
	// idleness empties a 5-minute baseline, not a 6-minute one.
	r := newRig(t, breaker.Config{TripWindow: 3 * time.Minute, Failures: breaker.Failures{Disabled: true}})
	r.serve(30, ok, time.Millisecond, time.Second)
	r.clock.Advance(5*time.Minute + 10*time.Second)
	_, known := r.b.NormalLatency()
	assert.True(t, known, "the baseline did not widen past 5 min")
}

// A relative trip the caller never configured steps aside rather than turn a
// long TripWindow into an error; one they configured does not (see TestBadConfigs).
func TestDefaultRelativeTripStepsAside(t *testing.T) {
	for _, tc := range []struct {
		trip  time.Duration
		armed bool
	}{{6 * time.Minute, true}, {6*time.Minute + time.Second, false}} {
		r := newRig(t, breaker.Config{TripWindow: tc.trip, ConsecutiveFailures: math.MaxInt,
			SlowCalls: breaker.SlowCalls{Disabled: true}})
		r.serve(100, ok, time.Millisecond, time.Second)
		_, known := r.b.NormalFailureRate()
		assert.Equal(t, tc.armed, known, "TripWindow %v", tc.trip)
	}
}

func TestLongBreakWidensDefaultMax(t *testing.T) {
	r := newRig(t, breaker.Config{BreakDuration: 5 * time.Minute, BreakJitter: breaker.JitterNone, ConsecutiveFailures: 1})
	runFail(r)
	assert.Equal(t, 5*time.Minute, r.refused())
	r.clock.Advance(5 * time.Minute)
	runFail(r)
	assert.Equal(t, 5*time.Minute, r.refused(), "an unset maximum never shortens the break the caller chose")
}

// Every field at its documented maximum builds a breaker that works: the
// longest break ends exactly when it should, not at once (as a break end that
// overflowed the clock did), and the most probe slots all fill.
func TestConfigAtItsMaximums(t *testing.T) {
	r := newRig(t, breaker.Config{
		ConsecutiveFailures: 1,
		BreakDuration:       breaker.MaxDuration,
		MaxBreakDuration:    breaker.MaxDuration,
		BreakJitter:         breaker.JitterNone,
		HalfOpenProbes:      conf.MaxHalfOpenProbes,
		TripWindow:          breaker.MaxDuration / 4, // so that both baselines win their races
		SlowCallThreshold:   breaker.MaxDuration,
		SlowCalls:           breaker.SlowCalls{Window: breaker.MaxDuration},
		Failures:            breaker.Failures{Window: breaker.MaxDuration, Multiple: 1.5},
		Recovery:            &breaker.Recovery{Minimum: breaker.MaxDuration, Maximum: breaker.MaxDuration, TrickleEvery: breaker.MaxDuration},
	})
	runFail(r)
	assert.Equal(t, breaker.Open, r.state())
	assert.Equal(t, breaker.MaxDuration, r.refused())
	r.clock.Advance(breaker.MaxDuration - time.Nanosecond)
	assert.Equal(t, breaker.Open, r.state(), "a nanosecond of the break is left")
	assert.Equal(t, time.Nanosecond, r.refused())
	r.clock.Advance(time.Nanosecond)
	assert.Equal(t, breaker.HalfOpen, r.state())
	for range conf.MaxHalfOpenProbes {
		r.admit()
	}
	r.refused() // every slot is busy
	assert.Equal(t, conf.MaxHalfOpenProbes, r.b.Snapshot().Probes)
	r.b.Done(r.ticket[1], ok)
	r.b.Done(r.ticket[2], ok)
	s := r.b.Snapshot()
	assert.Equal(t, breaker.Recovering, s.State)
	assert.Equal(t, breaker.MaxDuration, s.RampLength)
	assert.Zero(t, r.refused(), "a ramp refusal carries no hint, however long the ramp")
}

func TestStringers(t *testing.T) {
	assert.Equal(t, "closed", breaker.Closed.String())
	assert.Equal(t, "open", breaker.Open.String())
	assert.Equal(t, "half-open", breaker.HalfOpen.String())
	assert.Equal(t, "recovering", breaker.Recovering.String())
	assert.Equal(t, "isolated", breaker.Isolated.String())
	assert.Equal(t, "breaker.State(9)", breaker.State(9).String())
	assert.Equal(t, "equal", breaker.JitterEqual.String())
	assert.Equal(t, "full", breaker.JitterFull.String())
	assert.Equal(t, "none", breaker.JitterNone.String())
	assert.Equal(t, "probe failed", breaker.CauseProbeFailed.String())
	assert.Equal(t, "relative failure ratio", breaker.CauseRelativeFailureRatio.String())
	assert.Equal(t, "ramp failed", breaker.CauseRampFailed.String())
	assert.Equal(t, "ramp done", breaker.CauseRampDone.String())
	assert.Equal(t, "breaker.Cause(0)", breaker.Cause(0).String())
}

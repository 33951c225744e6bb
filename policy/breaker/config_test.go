package breaker_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
	err := breaker.Config{HalfOpenProbes: -1, FailureRatio: 3, BreakDuration: -1}.Validate()
	require.Error(t, err)
	for _, field := range []string{"HalfOpenProbes", "FailureRatio", "BreakDuration"} {
		assert.Contains(t, err.Error(), "Config."+field)
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
	assert.Equal(t, "breaker.Cause(0)", breaker.Cause(0).String())
}

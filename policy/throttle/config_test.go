package throttle_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/policy/throttle"
)

func mustNew(t testing.TB, cfg throttle.Config) *throttle.Throttle {
	t.Helper()
	th, err := throttle.New(cfg)
	require.NoError(t, err)
	return th
}

func TestBadConfigsAreRefusedNamingTheField(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cfg   throttle.Config
		field string
		value string
	}{
		{"K below 1", throttle.Config{K: 0.5}, "Config.K", "0.5"},
		{"negative K", throttle.Config{K: -2}, "Config.K", "-2"},
		{"NaN K", throttle.Config{K: math.NaN()}, "Config.K", "NaN"},
		{"infinite K", throttle.Config{K: math.Inf(1)}, "Config.K", "+Inf"},
		{"negative window", throttle.Config{Window: -time.Second}, "Config.Window", "-1s"},
		{"negative buckets", throttle.Config{Buckets: -1}, "Config.Buckets", "-1"},
		{"too many buckets", throttle.Config{Buckets: throttle.MaxBuckets + 1}, "Config.Buckets", "1001"},
		{"window shorter than its buckets", throttle.Config{Window: 5, Buckets: 10}, "Config.Window", "5ns"},
		{"window shorter than the default buckets", throttle.Config{Window: 11}, "Config.Window", "11ns"},
		{"negative max rejection", throttle.Config{MaxRejection: -0.1}, "Config.MaxRejection", "-0.1"},
		{"max rejection above 1", throttle.Config{MaxRejection: 1.5}, "Config.MaxRejection", "1.5"},
		{"NaN max rejection", throttle.Config{MaxRejection: math.NaN()}, "Config.MaxRejection", "NaN"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			require.Error(t, err)
			assert.ErrorContains(t, err, tc.field)
			assert.ErrorContains(t, err, "got "+tc.value)
			th, err := throttle.New(tc.cfg)
			assert.Nil(t, th)
			assert.ErrorContains(t, err, tc.field)
		})
	}
}

func TestEveryBadFieldIsNamed(t *testing.T) {
	err := throttle.Config{K: 0.5, Window: -1, Buckets: -1, MaxRejection: 2}.Validate()
	require.Error(t, err)
	joined, ok := err.(interface{ Unwrap() []error })
	require.True(t, ok)
	assert.Len(t, joined.Unwrap(), 4)
	for _, field := range []string{"K", "Window", "Buckets", "MaxRejection"} {
		assert.ErrorContains(t, err, "Config."+field)
	}
}

func TestEdgeValuesAreAccepted(t *testing.T) {
	for _, cfg := range []throttle.Config{
		{},
		{K: 1},
		{K: 1e9},
		{MaxRejection: 1},
		{MaxRejection: 1e-9},
		{Buckets: 1},
		{Buckets: throttle.MaxBuckets, Window: throttle.MaxBuckets},
		{Window: 12},
	} {
		assert.NoError(t, cfg.Validate(), "%+v", cfg)
		_, err := throttle.New(cfg)
		assert.NoError(t, err, "%+v", cfg)
	}
}

func TestGuardRefusesANilOrZeroThrottle(t *testing.T) {
	assert.PanicsWithValue(t, "throttle: Guard: throttle is nil (did you ignore the error from throttle.New?)", func() {
		throttle.Guard[int](nil)
	})
	assert.PanicsWithValue(t, "throttle: Throttle used without throttle.New (its zero value is not usable)", func() {
		throttle.Guard[int](&throttle.Throttle{})
	})
	assert.PanicsWithValue(t, "throttle: Throttle used without throttle.New (its zero value is not usable)", func() {
		_, _ = new(throttle.Throttle).Admit()
	})
}

func TestStageInfo(t *testing.T) {
	th := mustNew(t, throttle.Config{Name: "search"})
	want := pipeline.StageInfo{Kind: "throttle", Name: "search"}
	assert.Equal(t, want, th.Stage())
	assert.Equal(t, want, throttle.Guard[int](th).Stage())
	assert.Equal(t, "search", th.Name())
}

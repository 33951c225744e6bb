package ratelimit_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline/policy/ratelimit"
)

func TestBadConfigsAreRefusedNamingTheField(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cfg   ratelimit.Config
		field string
	}{
		{"no rate", ratelimit.Config{}, "Config.Rate"},
		{"negative rate", ratelimit.Config{Rate: -1}, "Config.Rate"},
		{"NaN rate", ratelimit.Config{Rate: math.NaN()}, "Config.Rate"},
		{"infinite rate", ratelimit.Config{Rate: math.Inf(1)}, "Config.Rate"},
		{"rate above one a nanosecond", ratelimit.Config{Rate: 2e9}, "Config.Rate"},
		{"negative burst", ratelimit.Config{Rate: 1, Burst: -1}, "Config.Burst"},
		{"burst too large to earn", ratelimit.Config{Rate: 1, Burst: math.MaxInt}, "Config.Burst"},
		{"negative wait", ratelimit.Config{Rate: 1, MaxWait: -time.Second}, "Config.MaxWait"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.field)
			l, err := ratelimit.New(tc.cfg)
			assert.Nil(t, l)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.field)
		})
	}
}

func TestDefaultBurstIsATenthOfASecondOfTokens(t *testing.T) {
	for _, tc := range []struct {
		rate  float64
		burst int
	}{
		{0.5, 1}, {1, 1}, {10, 1}, {11, 2}, {100, 10}, {1000, 100}, {2.5e5, 25000},
	} {
		l, err := ratelimit.New(ratelimit.Config{Rate: tc.rate})
		require.NoError(t, err)
		assert.Equal(t, tc.burst, l.Burst(), "rate %v", tc.rate)
	}
	l, err := ratelimit.New(ratelimit.Config{Rate: 100, Burst: 3})
	require.NoError(t, err)
	assert.Equal(t, 3, l.Burst(), "a burst that is set is kept")
}

func TestGuardRefusesANilLimiter(t *testing.T) {
	assert.PanicsWithValue(t, "ratelimit: Guard: limiter is nil (did you ignore the error from ratelimit.New?)", func() {
		ratelimit.Guard[int](nil)
	})
}

package adaptive_test

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline/criticality"
	"github.com/resilience-go/pipeline/policy/adaptive"
)

func TestBadConfigsAreRefusedNamingTheField(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cfg   adaptive.Config
		field string
	}{
		{"negative initial limit", adaptive.Config{InitialLimit: -1}, "Config.InitialLimit"},
		{"negative min limit", adaptive.Config{MinLimit: -1}, "Config.MinLimit"},
		{"negative max limit", adaptive.Config{MaxLimit: -1}, "Config.MaxLimit"},
		{"min above max", adaptive.Config{MinLimit: 10, MaxLimit: 5}, "Config.MinLimit"},
		{"initial above max", adaptive.Config{InitialLimit: 50, MaxLimit: 40}, "Config.InitialLimit"},
		{"initial below min", adaptive.Config{InitialLimit: 2, MinLimit: 3}, "Config.InitialLimit"},
		{"quantile of 1", adaptive.Config{Quantile: 1}, "Config.Quantile"},
		{"negative quantile", adaptive.Config{Quantile: -0.1}, "Config.Quantile"},
		{"NaN quantile", adaptive.Config{Quantile: math.NaN()}, "Config.Quantile"},
		{"tolerance of 1", adaptive.Config{Tolerance: 1}, "Config.Tolerance"},
		{"infinite tolerance", adaptive.Config{Tolerance: math.Inf(1)}, "Config.Tolerance"},
		{"negative interval", adaptive.Config{Interval: -time.Second}, "Config.Interval"},
		{"negative min samples", adaptive.Config{MinSamples: -1}, "Config.MinSamples"},
		{"negative queue", adaptive.Config{MaxQueue: -1}, "Config.MaxQueue"},
		{"negative wait", adaptive.Config{MaxQueue: 1, MaxWait: -1}, "Config.MaxWait"},
		{"wait without a queue", adaptive.Config{MaxWait: time.Second}, "Config.MaxWait"},
		{"negative tenant share", adaptive.Config{TenantShare: -0.5}, "Config.TenantShare"},
		{"tenant share above 1", adaptive.Config{TenantShare: 1.5}, "Config.TenantShare"},
		{"NaN tenant share", adaptive.Config{TenantShare: math.NaN()}, "Config.TenantShare"},
		{"a guarantee out of range", adaptive.Config{Guarantees: criticality.Guarantees{Default: 1}}, "Config.Guarantees: criticality: Guarantees.Default"},
		{"a guarantee above its share", adaptive.Config{Shares: criticality.Shares{Sheddable: 0.5}, Guarantees: criticality.Guarantees{Sheddable: 0.6}}, "Config.Guarantees: criticality: the guarantee of sheddable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.field)
			l, err := adaptive.New(tc.cfg)
			assert.Nil(t, l)
			assert.ErrorContains(t, err, tc.field)
		})
	}
}

func TestEveryBadFieldIsNamed(t *testing.T) {
	err := adaptive.Config{MinLimit: -1, Quantile: 2, Tolerance: 0.5, Interval: -1}.Validate()
	require.Error(t, err)
	joined, ok := err.(interface{ Unwrap() []error })
	require.True(t, ok)
	assert.Len(t, joined.Unwrap(), 4)
	for _, field := range []string{"MinLimit", "Quantile", "Tolerance", "Interval"} {
		assert.ErrorContains(t, err, "Config."+field)
	}
	assert.False(t, errors.Is(err, nil))
}

func TestADefaultInitialLimitFitsTheBoundsSet(t *testing.T) {
	l, err := adaptive.New(adaptive.Config{MaxLimit: 8})
	require.NoError(t, err, "a default never turns the settings given into an error")
	assert.Equal(t, 8, l.Limit())
	l, err = adaptive.New(adaptive.Config{MinLimit: 50})
	require.NoError(t, err)
	assert.Equal(t, 50, l.Limit())
}

func TestGuardRefusesANilLimiter(t *testing.T) {
	assert.PanicsWithValue(t, "adaptive: Guard: limiter is nil (did you ignore the error from adaptive.New?)", func() {
		adaptive.Guard[int](nil)
	})
}

package hedge_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline/policy/hedge"
)

func TestConfigRefusesImpossibleSettings(t *testing.T) {
	tests := []struct {
		cfg  hedge.Config
		want string
	}{
		{hedge.Config{Quantile: -0.1}, "hedge: Config.Quantile must lie in (0, 1] (0 means the default 0.95), got -0.1"},
		{hedge.Config{Quantile: 1.5}, "hedge: Config.Quantile must lie in (0, 1] (0 means the default 0.95), got 1.5"},
		{hedge.Config{Quantile: math.NaN()}, "hedge: Config.Quantile must lie in (0, 1] (0 means the default 0.95), got NaN"},
		{hedge.Config{MinDelay: -time.Millisecond}, "hedge: Config.MinDelay must not be negative, got -1ms"},
		{hedge.Config{MinSamples: -1}, "hedge: Config.MinSamples must not be negative, got -1"},
		{hedge.Config{MaxAttempts: 1}, "hedge: Config.MaxAttempts must be at least 2 (0 means the default 2), got 1"},
		{hedge.Config{MaxAttempts: -2}, "hedge: Config.MaxAttempts must be at least 2 (0 means the default 2), got -2"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			assert.EqualError(t, tt.cfg.Validate(), tt.want)
			p, err := hedge.New[string](tt.cfg)
			assert.EqualError(t, err, tt.want)
			assert.Nil(t, p)
		})
	}
}

func TestConfigNamesEveryBadField(t *testing.T) {
	err := hedge.Config{Quantile: 2, MinDelay: -1, MinSamples: -1, MaxAttempts: 1}.Validate()
	require.Error(t, err)
	for _, field := range []string{"Quantile", "MinDelay", "MinSamples", "MaxAttempts"} {
		assert.Contains(t, err.Error(), "Config."+field)
	}
	assert.Equal(t, 4, strings.Count(err.Error(), "hedge: Config."))
}

func TestTheZeroConfigIsValidAndMakesItsOwnEstimator(t *testing.T) {
	require.NoError(t, hedge.Config{}.Validate())
	p, err := hedge.New[int](hedge.Config{})
	require.NoError(t, err)
	require.NotNil(t, p.Estimator())
	assert.Equal(t, 30*time.Second, p.Estimator().Window())
}

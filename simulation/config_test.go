package simulation

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline/budget"
	"github.com/resilience-go/pipeline/policy/breaker"
)

func TestConfigRefusesImpossibleSettings(t *testing.T) {
	_, err := Run(Config{Processes: -1, Rate: -2, Client: Client{AttemptTimeout: -1, Deadline: -1, Retry: &Retry{MaxAttempts: -1}, Budget: &budget.Config{RefillPerSecond: -1}, Breaker: &breaker.Config{HalfOpenProbes: -1}}})
	require.Error(t, err)
	for _, want := range []string{
		"simulation: Config.Duration must be positive, got 0s",
		"simulation: Config.Dependency is required, got nil",
		"simulation: Config.Processes must not be negative, got -1",
		"simulation: Config.Rate must be a finite number above 0, got -2",
		"simulation: Client.AttemptTimeout must not be negative, got -1ns",
		"simulation: Client.Deadline must not be negative, got -1ns",
		"simulation: Client.Retry: retry: Config.MaxAttempts must be at least 1, got -1",
		"simulation: Client.Budget: budget:",
		"simulation: Client.Breaker: breaker:",
	} {
		assert.Contains(t, err.Error(), want)
	}
	_, err = Run(Config{Duration: time.Second, Rate: 1, Dependency: Healthy{}, Client: Client{Hedge: &Hedge{Quantile: 1.5, MinDelay: -1, MinSamples: -2, MaxAttempts: 1, Window: -time.Second}}})
	require.Error(t, err)
	for _, want := range []string{
		"simulation: Client.Hedge: hedge: Config.Quantile must lie in (0, 1] (0 means the default 0.95), got 1.5",
		"hedge: Config.MinDelay must not be negative, got -1ns",
		"hedge: Config.MinSamples must not be negative, got -2",
		"hedge: Config.MaxAttempts must be at least 2 (0 means the default 2), got 1",
		"latency: Config.Window must not be negative",
	} {
		assert.Contains(t, err.Error(), want)
	}
	assert.NoError(t, Config{Duration: time.Second, Rate: 1, Dependency: Healthy{}, Client: Client{Hedge: &Hedge{}}}.Validate(), "the zero Hedge is the default")
	_, err = Run(Config{Duration: time.Second, Rate: 1, Dependency: Outage{Base: Healthy{P50: time.Hour}}})
	assert.EqualError(t, err, "simulation: Healthy.P99 (100ms) must not be below Healthy.P50 (1h0m0s)")
	assert.NoError(t, busy(1).Validate())
}

package simulation

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline/budget"
	"github.com/resilience-go/pipeline/latency"
	"github.com/resilience-go/pipeline/policy/breaker"
	"github.com/resilience-go/pipeline/policy/hedge"
	"github.com/resilience-go/pipeline/policy/retry"
	"github.com/resilience-go/pipeline/standard"
)

// TestPresetIsWhatStandardBuilds: every setting of a standard.Config that a
// run can model reaches the simulated client, with the preset's defaults
// where the Config leaves a field zero.
func TestPresetIsWhatStandardBuilds(t *testing.T) {
	c, err := Preset(standard.Config{})
	require.NoError(t, err)
	total, attempt := standard.Config{}.Timeouts()
	assert.Equal(t, total, c.Deadline)
	assert.Equal(t, attempt, c.AttemptTimeout)
	require.NotNil(t, c.Breaker)
	assert.Equal(t, standard.Config{}.BreakerConfig(), *c.Breaker)
	require.NotNil(t, c.Breaker.Recovery, "the preset's ramp and trickle are on")
	assert.Equal(t, &budget.Config{}, c.Budget)
	assert.Equal(t, &Retry{}, c.Retry)
	assert.Equal(t, &Hedge{}, c.Hedge)
	assert.Nil(t, c.Throttle)

	backoff := retry.Exponential{Base: 50 * time.Millisecond}
	cfg := standard.Config{
		Timeout: 4 * time.Second, AttemptTimeout: time.Second,
		Retry:     retry.Config{MaxAttempts: 5, Backoff: backoff, RefusalPause: -1},
		Budget:    budget.Config{RefillPerSecond: 1},
		Breaker:   breaker.Config{ConsecutiveFailures: 9, Recovery: &breaker.Recovery{TrickleEvery: -1}},
		Hedge:     hedge.Config{Quantile: 0.99, MinDelay: 5 * time.Millisecond, MinSamples: 50, MaxAttempts: 3, MaxExtra: 0.5},
		Estimator: latency.Config{Window: time.Minute},
	}
	c, err = Preset(cfg)
	require.NoError(t, err)
	assert.Equal(t, 4*time.Second, c.Deadline)
	assert.Equal(t, time.Second, c.AttemptTimeout)
	assert.Equal(t, &Retry{MaxAttempts: 5, Backoff: backoff, RefusalPause: -1}, c.Retry)
	assert.Equal(t, &budget.Config{RefillPerSecond: 1}, c.Budget)
	assert.Equal(t, cfg.BreakerConfig(), *c.Breaker)
	assert.Equal(t, 9, c.Breaker.ConsecutiveFailures)
	assert.Equal(t, &Hedge{Quantile: 0.99, MinDelay: 5 * time.Millisecond, MinSamples: 50, MaxAttempts: 3, MaxExtra: 0.5, Window: time.Minute}, c.Hedge)

	c, err = Preset(standard.Config{NoHedge: true, NoRecovery: true})
	require.NoError(t, err)
	assert.Nil(t, c.Hedge)
	assert.Nil(t, c.Breaker.Recovery)

	bare := c.WithoutBreaker()
	assert.Nil(t, bare.Breaker)
	assert.Nil(t, bare.Hedge)
	assert.Equal(t, c.Retry, bare.Retry)

	_, err = Preset(standard.Config{Timeout: -1})
	assert.ErrorContains(t, err, "Config.Timeout")
}

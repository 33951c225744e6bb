package budget

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestConfigZeroValueMeansDefaults(t *testing.T) {
	b, err := New(Config{})
	require.NoError(t, err)
	assert.Equal(t, int64(defaultDepositPerSuccess*unit), b.deposit)
	assert.Equal(t, defaultRefillPerSecond, b.rate)
	assert.Equal(t, 30.0, b.Capacity())
	assert.Equal(t, 30.0, b.Tokens(), "a new budget starts full")
}

func TestConfigCapacity(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want float64
	}{
		{"derived from refill and horizon", Config{RefillPerSecond: 0.5, Horizon: 4 * time.Second}, 2},
		{"derived, never below one token", Config{RefillPerSecond: 0.01}, 1},
		{"default horizon", Config{RefillPerSecond: 1}, 10},
		{"explicit", Config{Capacity: 7}, 7},
		{"explicit one", Config{Capacity: 1, RefillPerSecond: 100}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := New(tt.cfg)
			require.NoError(t, err)
			assert.InDelta(t, tt.want, b.Capacity(), 1e-12)
			assert.InDelta(t, tt.want, b.Tokens(), 1e-12)
		})
	}
}

func TestConfigRefusesImpossibleSettings(t *testing.T) {
	tests := []struct {
		cfg  Config
		want string
	}{
		{Config{DepositPerSuccess: -0.1}, "budget: Config.DepositPerSuccess must be a fraction in 0..1, got -0.1"},
		{Config{DepositPerSuccess: 1.5}, "budget: Config.DepositPerSuccess must be a fraction in 0..1, got 1.5"},
		{Config{DepositPerSuccess: math.NaN()}, "budget: Config.DepositPerSuccess must be a fraction in 0..1, got NaN"},
		{Config{RefillPerSecond: -3}, "budget: Config.RefillPerSecond must be a finite number >= 0, got -3"},
		{Config{RefillPerSecond: math.Inf(1)}, "budget: Config.RefillPerSecond must be a finite number >= 0, got +Inf"},
		{Config{RefillPerSecond: math.NaN()}, "budget: Config.RefillPerSecond must be a finite number >= 0, got NaN"},
		{Config{Horizon: -time.Second}, "budget: Config.Horizon must not be negative, got -1s"},
		{Config{Capacity: -1}, "budget: Config.Capacity must be a finite number >= 0, got -1"},
		{Config{Capacity: math.Inf(1)}, "budget: Config.Capacity must be a finite number >= 0, got +Inf"},
		{Config{Capacity: 0.5}, "budget: Config.Capacity must be at least 1 (one retry), got 0.5"},
		{Config{Capacity: 5, Horizon: time.Second}, "budget: set Config.Capacity (5) or Config.Horizon (1s), not both"},
		{Config{Capacity: 2e9}, "budget: Config.Capacity must be at most 1e+09, got 2e+09"},
		{Config{RefillPerSecond: 1e9, Horizon: time.Minute}, "budget: Config.RefillPerSecond (1e+09) x Config.Horizon (1m0s) gives a capacity of 6e+10 tokens, more than 1e+09"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			assert.EqualError(t, tt.cfg.Validate(), tt.want)
			b, err := New(tt.cfg)
			assert.EqualError(t, err, tt.want)
			assert.Nil(t, b)
		})
	}
}

func TestConfigAcceptsEdgeValues(t *testing.T) {
	for _, cfg := range []Config{
		{DepositPerSuccess: 1},
		{DepositPerSuccess: 1e-9},
		{RefillPerSecond: 1e-9},
		{Capacity: 1},
	} {
		_, err := New(cfg)
		assert.NoError(t, err, "%+v", cfg)
	}
}

package retry

import (
	"testing"
	"time"

	"github.com/resilience-go/pipeline/internal/retryrule"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestConfigZeroValueMeansDefaults(t *testing.T) {
	p, err := New[int](Config{})
	require.NoError(t, err)
	assert.Equal(t, retryrule.DefaultMaxAttempts, p.rule.MaxAttempts)
	assert.Equal(t, Exponential{}, p.rule.Backoff)
	assert.Equal(t, globalSource{}, p.rule.Rand)
	assert.Equal(t, retryrule.DefaultRefusalPause, p.rule.Pause)
	assert.Nil(t, p.rule.Budget)
}

func TestConfigRefusesImpossibleSettings(t *testing.T) {
	tests := []struct {
		cfg  Config
		want string
	}{
		{Config{MaxAttempts: -1}, "retry: Config.MaxAttempts must be at least 1, got -1"},
		{Config{Backoff: BackoffFunc(nil)}, "retry: Config.Backoff is a nil BackoffFunc"},
		{Config{Backoff: Exponential{Factor: 0.9}}, "retry: Exponential.Factor must be a finite number >= 1, got 0.9"},
		{Config{Backoff: Exponential{Base: 2 * time.Second, Max: time.Second, ThrottledBase: time.Second}},
			"retry: Exponential.Base (2s) must not exceed Exponential.Max (1s)"},
		{Config{Backoff: Constant{Interval: -time.Second}}, "retry: Constant.Interval must not be negative, got -1s"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			assert.EqualError(t, tt.cfg.Validate(), tt.want)
			p, err := New[string](tt.cfg)
			assert.EqualError(t, err, tt.want)
			assert.Nil(t, p)
		})
	}
}

func TestConfigAcceptsOneAttempt(t *testing.T) {
	p, err := New[int](Config{MaxAttempts: 1})
	require.NoError(t, err)
	assert.Equal(t, 1, p.rule.MaxAttempts)
}

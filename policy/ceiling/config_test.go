package ceiling_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/resilience-go/pipeline/policy/ceiling"
)

func TestConfigValidation(t *testing.T) {
	for _, tc := range []struct {
		cfg  ceiling.Config
		want string
	}{
		{ceiling.Config{Multiple: 0.5}, "ceiling: Config.Multiple must be a finite number of at least 1 (0 means the default 3), got 0.5"},
		{ceiling.Config{Multiple: -1}, "ceiling: Config.Multiple must be a finite number of at least 1 (0 means the default 3), got -1"},
		{ceiling.Config{Multiple: math.Inf(1)}, "ceiling: Config.Multiple must be a finite number of at least 1 (0 means the default 3), got +Inf"},
		{ceiling.Config{Multiple: math.NaN()}, "ceiling: Config.Multiple must be a finite number of at least 1 (0 means the default 3), got NaN"},
		{ceiling.Config{Quantile: 1.5}, "ceiling: Config.Quantile must lie in (0, 1] (0 means the default 0.95), got 1.5"},
		{ceiling.Config{Quantile: -0.1}, "ceiling: Config.Quantile must lie in (0, 1] (0 means the default 0.95), got -0.1"},
		{ceiling.Config{Floor: -time.Second}, "ceiling: Config.Floor must not be negative (0 means the default 250ms), got -1s"},
		{ceiling.Config{Cap: -time.Second}, "ceiling: Config.Cap must not be negative (0 means the default 10s), got -1s"},
		{ceiling.Config{Floor: 2 * time.Second, Cap: time.Second}, "ceiling: Config.Floor (2s) must not be above Config.Cap (1s)"},
		{ceiling.Config{Floor: 20 * time.Second}, "ceiling: Config.Floor (20s) must not be above Config.Cap (10s) (the cap is the default)"},
		{ceiling.Config{Cap: 100 * time.Millisecond}, "ceiling: Config.Floor (250ms) must not be above Config.Cap (100ms) (the floor is the default)"},
		{ceiling.Config{MinSamples: -1}, "ceiling: Config.MinSamples must not be negative (0 means the default 50), got -1"},
	} {
		_, err := ceiling.New[int](tc.cfg)
		assert.EqualError(t, err, tc.want)
		assert.EqualError(t, tc.cfg.Validate(), tc.want)
	}
	err := ceiling.Config{Multiple: -1, MinSamples: -1}.Validate()
	assert.Equal(t, 2, strings.Count(err.Error(), "ceiling: Config."), "every bad field is named: %v", err)
	assert.NoError(t, ceiling.Config{Multiple: 1, Quantile: 1, Floor: time.Second, Cap: time.Second, MinSamples: 1}.Validate(), "edge values are valid")
}

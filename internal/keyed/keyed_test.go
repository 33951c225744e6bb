package keyed

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline/standard"
)

func TestWithinPrefixesEachError(t *testing.T) {
	a, b := errors.New("a"), errors.New("b")
	err := Within("x: Config.F", errors.Join(a, b))
	assert.Equal(t, "x: Config.F: a\nx: Config.F: b", err.Error())
	assert.ErrorIs(t, err, b)
	assert.Equal(t, "x: Config.F: a", Within("x: Config.F", a).Error())
}

func TestConfigOfAKey(t *testing.T) {
	cfg, err := Config(standard.Config{Timeout: time.Minute}, "k", nil, "x: Config.For(k)", nil, nil)
	require.NoError(t, err)
	assert.Equal(t, "k", cfg.Name)
	assert.True(t, cfg.Hedge.Repeatable)

	cfg, err = Config(standard.Config{}, "k", func(c standard.Config) standard.Config { c.Timeout = 5 * time.Second; return c }, "x: Config.For(k)", nil, nil)
	require.NoError(t, err)
	assert.Equal(t, 5*time.Second, cfg.Timeout)

	_, err = Config(standard.Config{}, "k", func(c standard.Config) standard.Config { c.Timeout = -1; return c }, "x: Config.For(k)", nil, nil)
	assert.ErrorContains(t, err, "x: Config.For(k): standard: Config.Timeout must not be negative")
}

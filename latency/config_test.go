package latency

import (
	"errors"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestConfigZeroMeansDefaults(t *testing.T) {
	require.NoError(t, Config{}.Validate())
	e, err := New(Config{})
	require.NoError(t, err)
	assert.Equal(t, DefaultWindow, e.Window())
	assert.Equal(t, 30*time.Second, e.Window())
	assert.Equal(t, defaultSlices, e.w.Slices())
	assert.Equal(t, 3*time.Second, e.w.Span()/time.Duration(e.w.Slices()))
}

func TestConfigValid(t *testing.T) {
	for _, tc := range []struct {
		cfg    Config
		window time.Duration
		slices int
	}{
		{Config{Window: 5 * time.Minute}, 5 * time.Minute, defaultSlices},
		{Config{Slices: 1}, DefaultWindow, 1},
		{Config{Slices: maxSlices}, DefaultWindow, maxSlices},
		{Config{Window: 10, Slices: 10}, 10, 10},
		{Config{Window: 10}, 10, defaultSlices}, // 1 ns slices
		{Config{Clock: clockwork.NewFakeClock()}, DefaultWindow, defaultSlices},
	} {
		assert.NoError(t, tc.cfg.Validate(), "%+v", tc.cfg)
		e, err := New(tc.cfg)
		require.NoError(t, err, "%+v", tc.cfg)
		assert.Equal(t, tc.window, e.Window())
		assert.Equal(t, tc.window, e.w.Span())
		assert.Equal(t, tc.slices, e.w.Slices())
	}
}

func TestConfigRefusesNamingEveryField(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want []string
	}{
		{Config{Window: -time.Second}, []string{"latency: Config.Window must not be negative (0 means the default 30s), got -1s"}},
		{Config{Slices: -1}, []string{"latency: Config.Slices must be between 1 and 1000 (0 means the default 10), got -1"}},
		{Config{Slices: maxSlices + 1}, []string{"latency: Config.Slices must be between 1 and 1000 (0 means the default 10), got 1001"}},
		{Config{Window: 9}, []string{"latency: Config.Window must be at least Config.Slices nanoseconds (a slice of at least 1ns), got Window 9ns with Slices 10"}},
		{Config{Window: 99, Slices: 100}, []string{"got Window 99ns with Slices 100"}},
		{Config{Window: -1, Slices: -1}, []string{"Config.Window must not be negative", "got -1ns", "Config.Slices must be between", "got -1"}},
	} {
		err := tc.cfg.Validate()
		require.Error(t, err, "%+v", tc.cfg)
		for _, s := range tc.want {
			assert.Contains(t, err.Error(), s, "%+v", tc.cfg)
		}
		e, err2 := New(tc.cfg)
		assert.Nil(t, e)
		assert.Equal(t, err.Error(), err2.Error(), "New refuses what Validate refuses")
	}
	// Both fields bad: two joined errors.
	err := Config{Window: -1, Slices: 2000}.Validate()
	var joined interface{ Unwrap() []error }
	require.True(t, errors.As(err, &joined))
	assert.Len(t, joined.Unwrap(), 2)
}

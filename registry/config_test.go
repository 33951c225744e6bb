package registry

import (
	"errors"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func newInt(key string) (int, error) { return len(key), nil }

func TestConfigZeroMeansDefaults(t *testing.T) {
	cfg := Config[string, int]{New: newInt}
	require.NoError(t, cfg.Validate())
	r, err := New(cfg)
	require.NoError(t, err)
	assert.Equal(t, DefaultMaxKeys, r.maxKeys)
	assert.Equal(t, 1024, r.maxKeys)
	assert.Equal(t, DefaultIdleAfter, r.idleAfter)
	assert.Equal(t, 10*time.Minute, r.idleAfter)
	assert.Nil(t, r.clock)
	assert.Nil(t, r.onEvict)
	assert.Equal(t, 0, r.Len())
}

func TestConfigValid(t *testing.T) {
	clock := clockwork.NewFakeClock()
	for _, tc := range []struct {
		cfg     Config[string, int]
		maxKeys int
		idle    time.Duration
	}{
		{Config[string, int]{New: newInt, MaxKeys: 1}, 1, DefaultIdleAfter},
		{Config[string, int]{New: newInt, MaxKeys: 1 << 40}, 1 << 40, DefaultIdleAfter},
		{Config[string, int]{New: newInt, IdleAfter: 1}, DefaultMaxKeys, 1},
		{Config[string, int]{New: newInt, IdleAfter: 1<<63 - 1}, DefaultMaxKeys, 1<<63 - 1},
		{Config[string, int]{New: newInt, Clock: clock, OnEvict: func(string, int) {}}, DefaultMaxKeys, DefaultIdleAfter},
	} {
		assert.NoError(t, tc.cfg.Validate(), "%+v", tc.cfg)
		r, err := New(tc.cfg)
		require.NoError(t, err, "%+v", tc.cfg)
		assert.Equal(t, tc.maxKeys, r.maxKeys)
		assert.Equal(t, tc.idle, r.idleAfter)
	}
}

func TestConfigRefusesNamingEveryField(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config[string, int]
		want []string
	}{
		{Config[string, int]{}, []string{"registry: Config.New is required (it builds the state of a key), got nil"}},
		{Config[string, int]{New: newInt, MaxKeys: -1}, []string{"registry: Config.MaxKeys must not be negative (0 means the default 1024), got -1"}},
		{Config[string, int]{New: newInt, IdleAfter: -time.Second}, []string{"registry: Config.IdleAfter must not be negative (0 means the default 10m0s), got -1s"}},
		{Config[string, int]{MaxKeys: -5, IdleAfter: -1}, []string{"Config.New is required", "Config.MaxKeys", "got -5", "Config.IdleAfter", "got -1ns"}},
	} {
		err := tc.cfg.Validate()
		require.Error(t, err, "%+v", tc.cfg)
		for _, s := range tc.want {
			assert.Contains(t, err.Error(), s, "%+v", tc.cfg)
		}
		r, err2 := New(tc.cfg)
		assert.Nil(t, r)
		assert.Equal(t, err.Error(), err2.Error(), "New refuses what Validate refuses")
	}
	// All three fields bad: three joined errors.
	err := Config[string, int]{MaxKeys: -1, IdleAfter: -1}.Validate()
	var joined interface{ Unwrap() []error }
	require.True(t, errors.As(err, &joined))
	assert.Len(t, joined.Unwrap(), 3)
}

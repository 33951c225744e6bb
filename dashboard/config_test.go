package dashboard_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline/dashboard"
)

// TestConfigErrorsNameTheField checks every impossible setting, each
// named with its value, and that New refuses them.
func TestConfigErrorsNameTheField(t *testing.T) {
	err := dashboard.Config{
		Interval:        -time.Second,
		History:         -1,
		PeerTimeout:     -time.Second,
		PeerConcurrency: -2,
	}.Validate()
	require.Error(t, err)
	for _, want := range []string{
		"dashboard: Config.Registry must not be nil",
		"dashboard: Config.Interval must not be negative (0 means the default 1s), got -1s",
		"dashboard: Config.History must not be negative (0 means the default 300), got -1",
		"dashboard: Config.PeerTimeout must not be negative (0 means the default 2s), got -1s",
		"dashboard: Config.PeerConcurrency must not be negative (0 means the default 32), got -2",
	} {
		assert.Contains(t, err.Error(), want)
	}
	assert.ErrorContains(t, dashboard.Config{Registry: registry(), History: 1 << 20}.Validate(),
		"dashboard: Config.History must be at most 3600 samples, got 1048576")
	d, err := dashboard.New(dashboard.Config{})
	assert.Nil(t, d)
	assert.ErrorContains(t, err, "Config.Registry")
	assert.NoError(t, dashboard.Config{Registry: registry()}.Validate(), "the zero value of every other field is a default")
}

// TestCloseStopsTheSampler: Close is idempotent, and leaves no goroutine
// behind (the bubble would report it blocked); the dashboard still serves.
func TestCloseStopsTheSampler(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d, err := dashboard.New(dashboard.Config{Registry: registry()})
		require.NoError(t, err)
		time.Sleep(3 * time.Second)
		d.Close()
		d.Close()
		assert.Equal(t, 200, get(d, "/state.json").Code)
	})
}

package health_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline/health"
	"github.com/resilience-go/pipeline/policy/adaptive"
	"github.com/resilience-go/pipeline/policy/bulkhead"
	"github.com/resilience-go/pipeline/policy/ratelimit"
)

func TestLimitsAreReadAsTheyStandWithoutChangingThem(t *testing.T) {
	b, err := bulkhead.New(bulkhead.Config{Name: "pool", MaxConcurrent: 4})
	require.NoError(t, err)
	_, ok := b.TryAcquire(context.Background())
	require.True(t, ok)
	a, err := adaptive.New(adaptive.Config{Name: "adapt", Clock: clockwork.NewFakeClock()})
	require.NoError(t, err)
	r, err := ratelimit.New(ratelimit.Config{Name: "quota", Rate: 1, Burst: 5, Clock: clockwork.NewFakeClock()})
	require.NoError(t, err)
	_, ok = r.Allow()
	require.True(t, ok)

	var deps health.Registry
	deps.Add(health.Limits("search", b, a, r))
	for range 2 { // reading twice reads the same: nothing was taken
		rep := deps.Report()
		require.Len(t, rep.Dependencies, 1)
		got := rep.Dependencies[0].Limits
		require.Len(t, got, 3)
		assert.Equal(t, health.Limit{Kind: "bulkhead", Name: "pool", InUse: 1, Limit: 4}, got[0])
		assert.Equal(t, "adaptive", got[1].Kind)
		assert.Equal(t, float64(a.Limit()), got[1].Limit)
		assert.Equal(t, health.Limit{Kind: "ratelimit", Name: "quota", InUse: 1, Limit: 5}, got[2])
	}
	assert.Equal(t, 1, b.InFlight())
	out, err := json.Marshal(deps.Report())
	require.NoError(t, err)
	assert.Contains(t, string(out), `"limits":[{"kind":"bulkhead","name":"pool","in_use":1,"limit":4}`)
}

func TestLimitsRefusesWhatItCannotRead(t *testing.T) {
	assert.PanicsWithValue(t, "health: Limits: string is not a limit the health view reads (a *bulkhead.Bulkhead, *adaptive.Limiter or *ratelimit.Limiter)", func() { health.Limits("x", "pool") })
	var b *bulkhead.Bulkhead
	assert.Panics(t, func() { health.Limits("x", b) })
}

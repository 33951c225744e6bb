package breakertest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/breaker"
)

// TestModelOpensThenHalfOpens is the model on its own: what a breaker with
// this configuration must do. Two failures in a row open it for the default
// 15 s, unjittered, and the refusal says so; when the break ends it reads
// HalfOpen.
func TestModelOpensThenHalfOpens(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	m := newModel(breaker.Config{ConsecutiveFailures: 2, BreakJitter: breaker.JitterNone}, t0)
	for range 2 {
		tk, _ := m.Admit(t0)
		require.True(t, tk.Admitted, "a closed model admits")
		m.Record(t0, tk, outcome.Verdict{Kind: outcome.Transient}, time.Millisecond)
	}
	tk, retryAfter := m.Admit(t0)
	assert.False(t, tk.Admitted)
	assert.Equal(t, breaker.Open, m.State(t0))
	assert.Equal(t, 15*time.Second, retryAfter)
	assert.Equal(t, breaker.Open, m.State(t0.Add(15*time.Second-time.Nanosecond)))
	assert.Equal(t, breaker.HalfOpen, m.State(t0.Add(15*time.Second)))
}

// TestJitterBounds pins the model's statement of the jitter rule, which the
// property holds every break of the real breaker to.
func TestJitterBounds(t *testing.T) {
	for _, tc := range []struct {
		j      breaker.Jitter
		d      time.Duration
		lo, hi time.Duration
	}{
		{breaker.JitterEqual, 15 * time.Second, 7500 * time.Millisecond, 15 * time.Second},
		{breaker.JitterEqual, 3, 2, 3}, // an odd half rounds up
		{breaker.JitterFull, 15 * time.Second, 0, 15 * time.Second},
		{breaker.JitterNone, 15 * time.Second, 15 * time.Second, 15 * time.Second},
	} {
		lo, hi := jitterBounds(tc.j, tc.d)
		assert.Equal(t, tc.lo, lo, "%v of %v: shortest", tc.j, tc.d)
		assert.Equal(t, tc.hi, hi, "%v of %v: longest", tc.j, tc.d)
	}
}

package breaker_test

import (
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/resilience-go/pipeline/policy/breaker"
)

// TestEventsLogValue checks the groups the breaker's events log as, and the
// level of each kind of transition and refusal.
func TestEventsLogValue(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	trip := breaker.Transition{From: breaker.Closed, To: breaker.Open, Cause: breaker.CauseConsecutiveFailures, Break: 15 * time.Second, At: at}
	assert.Equal(t, "[from=closed to=open cause=consecutive failures break=15s at=2026-01-02 03:04:05 +0000 UTC]", trip.LogValue().String())
	probe := breaker.Transition{From: breaker.Open, To: breaker.HalfOpen, Cause: breaker.CauseBreakElapsed, At: at, Shadow: true}
	assert.Equal(t, "[from=open to=half-open cause=break elapsed at=2026-01-02 03:04:05 +0000 UTC shadow=true]", probe.LogValue().String())
	refusal := breaker.Rejection{State: breaker.HalfOpen, RetryAfter: time.Second, At: at}
	assert.Equal(t, "[state=half-open retry_after=1s at=2026-01-02 03:04:05 +0000 UTC]", refusal.LogValue().String())

	levels := []struct {
		to   breaker.State
		want slog.Level
	}{
		{breaker.Open, slog.LevelWarn},
		{breaker.Isolated, slog.LevelWarn},
		{breaker.HalfOpen, slog.LevelInfo},
		{breaker.Recovering, slog.LevelInfo},
		{breaker.Closed, slog.LevelInfo},
	}
	for _, l := range levels {
		assert.Equal(t, l.want, breaker.Transition{To: l.to}.Level(), "to %v", l.to)
	}
	assert.Equal(t, slog.LevelWarn, refusal.Level())
	refusal.Shadow = true
	assert.Equal(t, slog.LevelInfo, refusal.Level())
}

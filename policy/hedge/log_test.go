package hedge_test

import (
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/resilience-go/pipeline/policy/hedge"
)

// TestEventsLogValue checks the groups the hedge's events log as, and their
// levels.
func TestEventsLogValue(t *testing.T) {
	h := hedge.Hedged{Attempt: 1, Hedge: 2, Delay: 30 * time.Millisecond}
	assert.Equal(t, "[attempt=1 hedge=2 delay=30ms]", h.LogValue().String())
	assert.Equal(t, slog.LevelDebug, h.Level())
	s := hedge.Skipped{Attempt: 2, Why: "breaker"}
	assert.Equal(t, "[attempt=2 why=breaker]", s.LogValue().String())
	assert.Equal(t, slog.LevelDebug, s.Level())
}

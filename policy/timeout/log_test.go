package timeout_test

import (
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/resilience-go/pipeline/policy/timeout"
)

// TestTimedOutLogValue checks the group a TimedOut event logs as, and its
// level.
func TestTimedOutLogValue(t *testing.T) {
	e := timeout.TimedOut{Timeout: 10 * time.Second}
	assert.Equal(t, "[timeout=10s]", e.LogValue().String())
	assert.Equal(t, slog.LevelInfo, e.Level())
}

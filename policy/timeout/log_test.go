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
	cut := timeout.TimedOut{Timeout: 300 * time.Millisecond, Measured: 100 * time.Millisecond}
	assert.Equal(t, "[timeout=300ms measured=100ms]", cut.LogValue().String(), "a ceiling's cut")
}

// A ceiling's cause says what it was measured from; a fixed timeout's does not.
func TestErrorText(t *testing.T) {
	assert.Equal(t, "pipeline: timeout after 2s", (&timeout.Error{Duration: 2 * time.Second}).Error())
	assert.Equal(t, "pipeline: attempt ceiling of 300ms passed (measured p95: 100ms)",
		(&timeout.Error{Duration: 300 * time.Millisecond, Measured: 100 * time.Millisecond, Quantile: 0.95}).Error())
}

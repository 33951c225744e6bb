package ceiling_test

import (
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/resilience-go/pipeline/policy/ceiling"
)

// TestCutLogValue checks the group a Cut event logs as, and its level.
func TestCutLogValue(t *testing.T) {
	e := ceiling.Cut{Limit: 300 * time.Millisecond, Measured: 100 * time.Millisecond}
	assert.Equal(t, "[limit=300ms measured=100ms]", e.LogValue().String())
	assert.Equal(t, slog.LevelInfo, e.Level())
}

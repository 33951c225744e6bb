package adaptive_test

import (
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/resilience-go/pipeline/policy/adaptive"
)

func TestRevisionLogValue(t *testing.T) {
	cut := adaptive.Revision{From: 10, To: 6, Recent: 30 * time.Millisecond, Baseline: 10 * time.Millisecond}
	assert.Contains(t, cut.LogValue().String(), "from=10 to=6 ")
	assert.Equal(t, slog.LevelInfo, cut.Level())
	cut.To = 12
	assert.Equal(t, slog.LevelDebug, cut.Level())
}

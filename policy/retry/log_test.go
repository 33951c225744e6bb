package retry_test

import (
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/retry"
)

// TestScheduledLogValue checks the group a Scheduled event logs as, and its
// level.
func TestScheduledLogValue(t *testing.T) {
	e := retry.Scheduled{Attempt: 3, Delay: time.Second, Verdict: outcome.Verdict{Kind: outcome.Throttled}.WithRetryAfter(2 * time.Second), Err: errors.New("429")}
	assert.Equal(t, "[attempt=3 delay=1s verdict=throttled retry_after=2s err=429]", e.LogValue().String())
	assert.Equal(t, "[attempt=2 delay=0s verdict=transient]", retry.Scheduled{Attempt: 2, Verdict: outcome.Verdict{Kind: outcome.Transient}}.LogValue().String())
	assert.Equal(t, slog.LevelDebug, e.Level())
}

package fallback_test

import (
	"errors"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/fallback"
)

// TestExecutedLogValue checks the group an Executed event logs as, and its
// level.
func TestExecutedLogValue(t *testing.T) {
	e := fallback.Executed{Verdict: outcome.Verdict{Kind: outcome.Throttled, SelfImposed: true}, Err: errors.New("open")}
	assert.Equal(t, "[verdict=throttled self_imposed=true err=open]", e.LogValue().String())
	assert.Equal(t, slog.LevelInfo, e.Level())
	e.FuncErr = errors.New("no cache")
	assert.Equal(t, "[verdict=throttled self_imposed=true err=open func_err=no cache]", e.LogValue().String())
	assert.Equal(t, slog.LevelWarn, e.Level())
}

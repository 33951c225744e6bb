package fault_test

import (
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/resilience-go/pipeline/policy/fault"
)

// TestInjectedLogValue checks the group an Injected event logs as, and its
// level.
func TestInjectedLogValue(t *testing.T) {
	assert.Equal(t, "[attempt=2 kind=throttled]", fault.Injected{Attempt: 2, Kind: fault.Throttled}.LogValue().String())
	e := fault.Injected{Attempt: 1, Kind: fault.Latency, Delay: time.Second}
	assert.Equal(t, "[attempt=1 kind=latency delay=1s]", e.LogValue().String())
	assert.Equal(t, slog.LevelDebug, e.Level())
}

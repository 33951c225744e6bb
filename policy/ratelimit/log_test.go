package ratelimit_test

import (
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/resilience-go/pipeline/policy/bulkhead"
	"github.com/resilience-go/pipeline/policy/ratelimit"
)

func TestWaitedLogValues(t *testing.T) {
	for _, e := range []interface {
		LogValue() slog.Value
		Level() slog.Level
	}{ratelimit.Waited{Wait: time.Millisecond}, bulkhead.Waited{Wait: time.Millisecond}} {
		assert.Equal(t, "[wait=1ms]", e.LogValue().String())
		assert.Equal(t, slog.LevelDebug, e.Level())
	}
}

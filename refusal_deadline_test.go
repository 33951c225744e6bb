package pipeline_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/internal/breakerconf"
	"github.com/resilience-go/pipeline/policy/breaker"
	"github.com/resilience-go/pipeline/policy/retry"
	"github.com/resilience-go/pipeline/policy/timeout"
)

// TestARefusalAtTheDeadlineIsAlwaysTheRefusal: in the recommended order with a
// 40 ms whole-call timeout, the breaker trips on attempt 1 and refuses attempt
// 2; the retry's refusal pause is cut to end exactly at the deadline, so two
// timers fall due at one instant. Whichever fires first, the caller must read
// the breaker's refusal with its hint, never our own timeout.
func TestARefusalAtTheDeadlineIsAlwaysTheRefusal(t *testing.T) {
	for range 100 {
		synctest.Test(t, func(t *testing.T) {
			brk, err := breaker.New(breaker.Config{ConsecutiveFailures: 1, BreakJitter: breaker.JitterNone})
			require.NoError(t, err)
			p := pipeline.New(
				pipeline.Policy[int](must(timeout.New[int](timeout.Config{Timeout: 40 * time.Millisecond}))),
				must(retry.New[int](retry.Config{Backoff: retry.Constant{Interval: time.Millisecond, Jitter: retry.NoJitter}})),
				breaker.Guard[int](brk),
			)
			_, err = p.Execute(t.Context(), func(context.Context) (int, error) { return 0, errors.New("reset") })
			e, ok := errors.AsType[*pipeline.StopError](err)
			require.True(t, ok)
			assert.Equal(t, "breaker", e.Stage)
			assert.Equal(t, pipeline.DependencyUnavailable, e.Reason)
			assert.Equal(t, breakerconf.DefaultBreakDuration-40*time.Millisecond, e.RetryAfter,
				"the rest of the break when the caller reads it")
		})
	}
}

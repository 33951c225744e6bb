package timeout_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/policy/timeout"
)

// held is a value whose attempt's context the pipeline keeps alive until
// the value is released (pipeline.Options.WhenReleased), as a response body.
type held struct {
	ctx  context.Context
	done []func()
}

func (h *held) release() {
	for _, f := range h.done {
		f()
	}
}

// holding is a pipeline around stage whose values are *held.
func holding(t *testing.T, stage pipeline.Policy[*held]) *pipeline.Pipeline[*held] {
	t.Helper()
	return pipeline.New(stage).With(pipeline.Options[*held]{
		WhenReleased: func(h *held, done func()) *held { h.done = append(h.done, done); return h },
		Release:      (*held).release,
	})
}

// A value returned in time keeps its context, and by default the deadline
// still ends it, as http.Client.Timeout cuts a body; with UntilReturn, on the
// stage or on the call, the deadline ends when the work returns, and the
// context ends only when the value is released.
func TestUntilReturnEndsTheDeadlineAtTheReturn(t *testing.T) {
	for _, c := range []struct {
		name          string
		stage, call   bool
		endsAtTimeout bool
	}{
		{name: "by default", endsAtTimeout: true},
		{name: "Config.UntilReturn", stage: true},
		{name: "the call marked with UntilReturn", call: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				stage, err := timeout.New[*held](timeout.Config{Timeout: time.Second, UntilReturn: c.stage})
				require.NoError(t, err)
				ctx := t.Context()
				if c.call {
					ctx = timeout.UntilReturn(ctx)
				}
				v, err := holding(t, stage).Execute(ctx, func(ctx context.Context) (*held, error) {
					time.Sleep(500 * time.Millisecond)
					return &held{ctx: ctx}, nil
				})
				require.NoError(t, err)
				time.Sleep(time.Hour) // the body is read long after the deadline
				if c.endsAtTimeout {
					assert.ErrorIs(t, v.ctx.Err(), context.DeadlineExceeded)
				} else {
					assert.NoError(t, v.ctx.Err(), "the value's context outlives the deadline")
				}
				v.release()
				assert.Error(t, v.ctx.Err(), "released, its context ends")
			})
		})
	}
}

// UntilReturn bounds the work all the same: work slower than the timeout is
// cut at it, with the stage's Deadline stop.
func TestUntilReturnStillBoundsTheWork(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		stage, err := timeout.New[*held](timeout.Config{Timeout: time.Second, UntilReturn: true})
		require.NoError(t, err)
		start := time.Now()
		_, err = holding(t, stage).Execute(t.Context(), func(ctx context.Context) (*held, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		})
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Equal(t, time.Second, time.Since(start))
	})
}

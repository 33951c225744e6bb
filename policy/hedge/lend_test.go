package hedge_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/hedge"
	"github.com/resilience-go/pipeline/policy/retry"
	"github.com/resilience-go/pipeline/policy/timeout"
)

// seen is what the work saw of each copy's context.
type seen struct {
	mu   sync.Mutex
	ctxs []context.Context
	at   []time.Time // when each copy started
}

func (s *seen) add(ctx context.Context) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ctxs = append(s.ctxs, ctx)
	s.at = append(s.at, time.Now())
	return len(s.ctxs) - 1
}

// An attempt timeout right inside the hedge times each copy on the copy's own
// context (one context per copy, not two): each copy sees the attempt
// timeout's deadline and its copy number, a copy cut by the timeout ends with
// the timeout's cause and stop, and a copy that lost is canceled.
func TestAnAttemptTimeoutInsideTimesEachCopy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const attempt = 50 * time.Millisecond
		each, err := timeout.New[string](timeout.Config{Timeout: attempt})
		require.NoError(t, err)
		p := pipeline.New[string](stage(t, hedge.Config{MaxExtra: 1}), each)

		// Every copy hangs: each is cut by its own attempt timeout.
		var hung seen
		_, err = p.Execute(t.Context(), func(ctx context.Context) (string, error) {
			hung.add(ctx)
			<-ctx.Done()
			return "", ctx.Err()
		})
		stop, ok := errors.AsType[*pipeline.StopError](err)
		require.True(t, ok, "%v", err)
		assert.Equal(t, "timeout", stop.Stage)
		assert.Equal(t, pipeline.Deadline, stop.Reason)
		require.Len(t, hung.ctxs, 2, "the first copy and its hedge")
		for k, ctx := range hung.ctxs {
			deadline, ok := ctx.Deadline()
			assert.True(t, ok && deadline.Equal(hung.at[k].Add(attempt)), "copy %d: deadline %v, started %v", k, deadline, hung.at[k])
			n, _ := hedge.CopyOf(ctx)
			assert.Equal(t, k, n)
			assert.ErrorIs(t, ctx.Err(), context.DeadlineExceeded, "copy %d", k)
			assert.ErrorIs(t, context.Cause(ctx), outcome.ErrTimeout, "copy %d", k)
		}

		// The first copy hangs and the hedge wins: the first is canceled, not
		// timed out, and the winner's context ends once its value is returned.
		var won seen
		v, err := p.Execute(t.Context(), func(ctx context.Context) (string, error) {
			if won.add(ctx) == 0 {
				<-ctx.Done()
				return "", ctx.Err()
			}
			time.Sleep(time.Millisecond)
			return "hedge", nil
		})
		require.NoError(t, err)
		assert.Equal(t, "hedge", v)
		require.Len(t, won.ctxs, 2)
		assert.ErrorIs(t, won.ctxs[0].Err(), context.Canceled)
		assert.ErrorIs(t, won.ctxs[1].Err(), context.Canceled, "the winner's context ends with the call")
		deadline, _ := won.ctxs[1].Deadline()
		assert.True(t, deadline.Equal(won.at[1].Add(attempt)))
	})
}

// A stage between the hedge and the timeout may run the rest more than once
// with one context, as a retry does: there each attempt gets a context of its
// own, so that the first attempt's deadline does not end the second.
func TestARetryInsideTheHedgeGetsAContextPerAttempt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		each, err := timeout.New[string](timeout.Config{Timeout: 5 * time.Millisecond})
		require.NoError(t, err)
		retries, err := retry.New[string](retry.Config{})
		require.NoError(t, err)
		p := pipeline.New[string](stage(t, hedge.Config{MinDelay: time.Hour}), retries, each)
		var attempts seen
		v, err := p.Execute(t.Context(), func(ctx context.Context) (string, error) {
			if attempts.add(ctx) == 0 {
				<-ctx.Done()
				return "", ctx.Err()
			}
			return "second", nil
		})
		require.NoError(t, err)
		assert.Equal(t, "second", v)
		require.Len(t, attempts.ctxs, 2)
		assert.ErrorIs(t, attempts.ctxs[0].Err(), context.DeadlineExceeded)
	})
}

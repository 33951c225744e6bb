package retry

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
)

// TestBackoffWaitsOnThePipelineClock drives the backoff with a clockwork fake
// clock given to the pipeline: nothing happens until the test moves the clock.
func TestBackoffWaitsOnThePipelineClock(t *testing.T) {
	clock := clockwork.NewFakeClock()
	p := pipeline.New[int](mustNew[int](t, Config{Backoff: Exponential{Jitter: NoJitter}})).
		With(pipeline.Options[int]{Clock: clock})
	attempts := make(chan struct{}, 3)
	done := make(chan error, 1)
	go func() {
		_, err := p.Execute(context.Background(), func(context.Context) (int, error) {
			attempts <- struct{}{}
			return 0, errBoom
		})
		done <- err
	}()

	ctx := t.Context()
	<-attempts
	require.NoError(t, clock.BlockUntilContext(ctx, 1), "the retry waits on the pipeline's clock")
	clock.Advance(99 * time.Millisecond)
	// One timer is still waiting: either the first backoff's, or, had it fired
	// early, the one after attempt 2, which would then have been sent already.
	require.NoError(t, clock.BlockUntilContext(ctx, 1))
	assert.Empty(t, attempts, "attempt 2 ran before its 100 ms backoff was over")
	clock.Advance(time.Millisecond)
	<-attempts
	require.NoError(t, clock.BlockUntilContext(ctx, 1))
	clock.Advance(200 * time.Millisecond)
	<-attempts
	assert.ErrorIs(t, <-done, pipeline.AttemptsExhausted)
}

// TestDeadlineIsReadOnRealTimeWhateverTheClock: a fake clock set decades before
// the context's deadline must not make a backoff that cannot fit look as if it
// fits. The call stops at once rather than wait on the fake clock until the
// real deadline passes.
func TestDeadlineIsReadOnRealTimeWhateverTheClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clock := clockwork.NewFakeClockAt(time.Date(1990, 1, 1, 0, 0, 0, 0, time.UTC))
		p := pipeline.New[int](mustNew[int](t, Config{Backoff: Constant{Interval: time.Second, Jitter: NoJitter}})).
			With(pipeline.Options[int]{Clock: clock})
		ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := p.Execute(ctx, func(context.Context) (int, error) { return 0, errBoom })
		assert.Zero(t, time.Since(start), "a 1 s backoff cannot fit in 50 ms: stop at once")
		e, ok := errors.AsType[*pipeline.StopError](err)
		require.True(t, ok)
		assert.Equal(t, pipeline.Deadline, e.Reason)
	})
}

package retry

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/internal/retryrule"
	"github.com/resilience-go/pipeline/outcome"
)

// fakeBreaker is a stand-in for a circuit breaker stage: it lets attempts through
// until one fails, then refuses every attempt the way a breaker does.
type fakeBreaker struct {
	open       atomic.Bool
	retryAfter time.Duration
}

func (b *fakeBreaker) stage() pipeline.PolicyFunc[int] {
	return func(ctx context.Context, next pipeline.Next[int]) pipeline.Result[int] {
		if b.open.Load() {
			err := &pipeline.StopError{Stage: "breaker", Reason: pipeline.DependencyUnavailable, RetryAfter: b.retryAfter}
			if next.Observed() {
				next.Emit(ctx, pipeline.Stopped{Err: err})
			}
			return pipeline.Result[int]{
				Err:     err,
				Verdict: outcome.Verdict{Kind: outcome.Throttled, SelfImposed: true}.WithRetryAfter(b.retryAfter),
			}
		}
		r := next.Run(ctx)
		if r.Verdict.Failure() {
			b.open.Store(true)
		}
		return r
	}
}

func TestRefusalOnTheFirstAttemptPausesThenStops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		br := &fakeBreaker{retryAfter: time.Minute}
		br.open.Store(true)
		var ev events
		p := pipeline.New[int](mustNew[int](t, Config{}), br.stage()).With(pipeline.Options[int]{OnEvent: ev.hook})
		start := time.Now()
		w := newWork(succeed(1))

		_, err := p.Execute(t.Context(), w.fn)

		assert.Empty(t, w.attempts())
		assert.Equal(t, retryrule.DefaultRefusalPause, time.Since(start), "a caller looping on refusals cannot spin")
		e := stopError(t, err)
		assert.Equal(t, pipeline.DependencyUnavailable, e.Reason)
		assert.Equal(t, time.Minute-retryrule.DefaultRefusalPause, e.RetryAfter, "the hint as the caller receives it, after the pause")
		assert.Zero(t, e.Attempts)
		assert.NoError(t, e.Err)
		stops := ev.stops()
		require.Len(t, stops, 2, "the breaker's refusal, then the retry's stop")
		assert.Same(t, e, stops[1])
	})
}

func TestRefusalPauseIsBoundedByTheDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		br := &fakeBreaker{retryAfter: time.Minute}
		br.open.Store(true)
		p := pipeline.New[int](mustNew[int](t, Config{RefusalPause: time.Second}), br.stage())
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := p.Execute(ctx, newWork(succeed(1)).fn)
		assert.Equal(t, 30*time.Millisecond, time.Since(start))
		assert.ErrorIs(t, err, pipeline.DependencyUnavailable, "the refusal is still the reason")
	})
}

func TestRefusalPauseIsBoundedByTheHint(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		br := &fakeBreaker{retryAfter: 5 * time.Millisecond} // a rate limit's next token
		br.open.Store(true)
		p := pipeline.New[int](mustNew[int](t, Config{}), br.stage())
		start := time.Now()
		_, err := p.Execute(t.Context(), newWork(succeed(1)).fn)
		assert.Equal(t, 5*time.Millisecond, time.Since(start), "no longer than the refusal asked for")
		e := stopError(t, err)
		assert.Equal(t, pipeline.DependencyUnavailable, e.Reason, "the refusal is still the reason")
		assert.Zero(t, e.RetryAfter, "the hint has passed: the caller may call again at once")
	})
}

func TestRefusalPauseEndsWhenTheCallerCancels(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		br := &fakeBreaker{retryAfter: time.Minute}
		br.open.Store(true)
		p := pipeline.New[int](mustNew[int](t, Config{RefusalPause: time.Second}), br.stage())
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() {
			_, err := p.Execute(ctx, newWork(succeed(1)).fn)
			done <- err
		}()
		time.Sleep(10 * time.Millisecond) // virtual: into the pause
		start := time.Now()
		cancel()
		synctest.Wait()
		select {
		case err := <-done:
			assert.Zero(t, time.Since(start))
			assert.ErrorIs(t, err, pipeline.DependencyUnavailable)
		default:
			t.Fatal("the refusal pause outlived the caller's cancellation")
		}
	})
}

func TestRefusalWithTheCallerGoneReportsTheCancellation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		br := &fakeBreaker{}
		br.open.Store(true)
		p := pipeline.New[int](mustNew[int](t, Config{}), br.stage())
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		start := time.Now()
		_, err := p.Execute(ctx, newWork(succeed(1)).fn)
		assert.Zero(t, time.Since(start))
		e := stopError(t, err)
		assert.Equal(t, pipeline.Canceled, e.Reason)
		assert.ErrorIs(t, err, context.Canceled)
	})
}

// TestSelfImposedVerdictWithoutStopError: a user's stage that refuses with a
// self-imposed verdict but an error of its own is treated as a refusal too.
func TestSelfImposedVerdictWithoutStopError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		limiter := pipeline.PolicyFunc[int](func(context.Context, pipeline.Next[int]) pipeline.Result[int] {
			return pipeline.Result[int]{Err: errBoom, Verdict: outcome.Verdict{Kind: outcome.Throttled, SelfImposed: true}.WithRetryAfter(time.Second)}
		})
		p := pipeline.New[int](mustNew[int](t, Config{}), limiter)
		_, err := p.Execute(t.Context(), newWork(succeed(1)).fn)
		e := stopError(t, err)
		assert.Equal(t, "retry", e.Stage)
		assert.Equal(t, pipeline.DependencyUnavailable, e.Reason)
		assert.Equal(t, time.Second-retryrule.DefaultRefusalPause, e.RetryAfter)
	})
}

// TestANegativeRefusalPauseReturnsTheRefusalAtOnce: a caller that paces itself
// (a server shedding the request) turns the pause off; a refusal of the first
// attempt then comes back at once, as the refusing stage made it.
func TestANegativeRefusalPauseReturnsTheRefusalAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		br := &fakeBreaker{retryAfter: time.Minute}
		br.open.Store(true)
		var ev events
		p := pipeline.New[int](mustNew[int](t, Config{RefusalPause: -1}), br.stage()).With(pipeline.Options[int]{OnEvent: ev.hook})
		start := time.Now()
		_, err := p.Execute(t.Context(), newWork(succeed(1)).fn)
		assert.Zero(t, time.Since(start))
		stops := ev.stops()
		require.Len(t, stops, 2)
		assert.Same(t, stops[0], stopError(t, err), "the breaker's own stop, with its full hint")
		assert.Equal(t, time.Minute, stops[0].RetryAfter)
	})
}

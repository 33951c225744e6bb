package retry

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/outcome"
)

var errBoom = errors.New("boom")

func TestTransientFailuresFollowTheBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var ev events
		p := pipeline.New[int](mustNew[int](t, Config{MaxAttempts: 5, Backoff: Exponential{Jitter: NoJitter}})).
			With(pipeline.Options[int]{OnEvent: ev.hook})
		w := newWork(fail(errBoom))

		_, err := p.Execute(t.Context(), w.fn)

		assert.Equal(t, ms(0, 100, 300, 700, 1500), w.attempts())
		e := stopError(t, err)
		assert.Equal(t, "retry", e.Stage)
		assert.Equal(t, pipeline.AttemptsExhausted, e.Reason)
		assert.Equal(t, 5, e.Attempts)
		assert.Same(t, errBoom, e.Err)
		assert.ErrorIs(t, err, pipeline.AttemptsExhausted)
		assert.ErrorIs(t, err, errBoom)

		sched := ev.scheduled()
		require.Len(t, sched, 4)
		for i, s := range sched {
			assert.Equal(t, i+2, s.Attempt)
			assert.Equal(t, ms(100, 200, 400, 800)[i], s.Delay)
			assert.Equal(t, outcome.Transient, s.Verdict.Kind)
			assert.Same(t, errBoom, s.Err)
		}
		assert.Equal(t, []*pipeline.StopError{e}, ev.stops())
	})
}

func TestThrottledFailuresStartFromTheThrottledBase(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := pipeline.New[int](mustNew[int](t, Config{MaxAttempts: 4, Backoff: Exponential{Jitter: NoJitter}}))
		w := newWork(fail(outcome.MarkThrottled(errBoom, 0)))
		_, err := p.Execute(t.Context(), w.fn)
		assert.Equal(t, ms(0, 1000, 3000, 7000), w.attempts())
		assert.ErrorIs(t, err, pipeline.AttemptsExhausted)
	})
}

func TestDefaultFullJitterStaysWithinTheNominalDelays(t *testing.T) {
	for _, tt := range []struct {
		name string
		src  fixedSource
		want []time.Duration
	}{
		{"lowest draw", fixedSource(0), ms(0, 0, 0)},
		{"highest draw", highest.(fixedSource), ms(0, 100, 300)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := pipeline.New[int](mustNew[int](t, Config{Rand: tt.src}))
				w := newWork(fail(errBoom))
				_, _ = p.Execute(t.Context(), w.fn)
				assert.Equal(t, tt.want, w.attempts())
			})
		})
	}
}

func TestRetryAfterHintIsHonoured(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// Default backoff, full jitter: the hint replaces it, unjittered.
		p := pipeline.New[int](mustNew[int](t, Config{}))
		hinted := outcome.Mark(errBoom, outcome.Verdict{Kind: outcome.Transient}.WithRetryAfter(2*time.Second))
		w := newWork(fail(outcome.MarkThrottled(errBoom, 5*time.Second)), fail(hinted), succeed(42))

		v, err := p.Execute(t.Context(), w.fn)

		require.NoError(t, err)
		assert.Equal(t, 42, v)
		assert.Equal(t, ms(0, 5000, 7000), w.attempts())
	})
}

func TestRetryAfterHintIsCappedByTheMaximum(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := pipeline.New[int](mustNew[int](t, Config{MaxAttempts: 2}))
		w := newWork(fail(outcome.MarkThrottled(errBoom, time.Hour)), succeed(1))
		_, err := p.Execute(t.Context(), w.fn)
		require.NoError(t, err)
		assert.Equal(t, ms(0, 30_000), w.attempts())
	})
}

func TestDeadlineCutsTheRetryShort(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var ev events
		p := pipeline.New[int](mustNew[int](t, Config{MaxAttempts: 10, Backoff: Exponential{Jitter: NoJitter}})).
			With(pipeline.Options[int]{OnEvent: ev.hook})
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		start := time.Now()
		w := newWork(fail(errBoom))

		_, err := p.Execute(ctx, w.fn)

		// Attempts at 0, 100, 300 and 700 ms; the next wait (800 ms) would end
		// after the deadline, so the call stops at 700 ms without sleeping.
		assert.Equal(t, ms(0, 100, 300, 700), w.attempts())
		assert.Equal(t, 700*time.Millisecond, time.Since(start))
		e := stopError(t, err)
		assert.Equal(t, pipeline.Deadline, e.Reason)
		assert.Equal(t, 4, e.Attempts)
		assert.Same(t, errBoom, e.Err)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Len(t, ev.scheduled(), 3, "the cut retry is never scheduled")
		assert.Equal(t, []*pipeline.StopError{e}, ev.stops())
	})
}

func TestHintBeyondTheDeadlineStopsAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := pipeline.New[int](mustNew[int](t, Config{}))
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
		defer cancel()
		start := time.Now()
		w := newWork(fail(outcome.MarkThrottled(errBoom, 2*time.Second)))

		_, err := p.Execute(ctx, w.fn)

		assert.Zero(t, time.Since(start), "no sleeping towards a retry that cannot happen")
		assert.Len(t, w.attempts(), 1)
		e := stopError(t, err)
		assert.Equal(t, pipeline.HintBeyondDeadline, e.Reason, "a wait ending exactly at the deadline leaves no time for the attempt")
		assert.Equal(t, 2*time.Second, e.RetryAfter, "the hint is kept")
		assert.ErrorIs(t, err, pipeline.HintBeyondDeadline)
		assert.NotErrorIs(t, err, context.DeadlineExceeded, "no deadline passed: the hint ended the call")
		assert.Contains(t, err.Error(), "retry-after hint outlasts the deadline (retry after 2s)")
	})
}

func TestPermanentFailureIsNotRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := pipeline.New[int](mustNew[int](t, Config{}))
		w := newWork(fail(outcome.MarkPermanent(errBoom)))
		_, err := p.Execute(t.Context(), w.fn)
		assert.Len(t, w.attempts(), 1)
		e := stopError(t, err)
		assert.Equal(t, pipeline.Permanent, e.Reason)
		assert.Equal(t, 1, e.Attempts)
		assert.ErrorIs(t, err, pipeline.Permanent)
		assert.ErrorIs(t, err, errBoom)
	})
}

func TestCallerCancellationDuringBackoffReturnsAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := pipeline.New[int](mustNew[int](t, Config{Backoff: Exponential{Jitter: NoJitter, Base: 10 * time.Second}}))
		ctx, cancel := context.WithCancelCause(t.Context())
		errGone := errors.New("caller went away")
		w := newWork(fail(errBoom))
		done := make(chan error, 1)
		go func() {
			_, err := p.Execute(ctx, w.fn)
			done <- err
		}()
		synctest.Wait() // the retry is waiting out its backoff
		require.Len(t, w.attempts(), 1)
		start := time.Now()
		cancel(errGone)
		synctest.Wait()

		var err error
		select {
		case err = <-done:
		default:
			t.Fatal("Execute did not return when the caller canceled during the backoff")
		}
		assert.Zero(t, time.Since(start))
		assert.Len(t, w.attempts(), 1)
		e := stopError(t, err)
		assert.Equal(t, pipeline.Canceled, e.Reason)
		assert.Same(t, errGone, e.Cause)
		assert.Equal(t, 1, e.Attempts)
		assert.Same(t, errBoom, e.Err)
		assert.ErrorIs(t, err, errGone)
		assert.ErrorIs(t, err, context.Canceled)
	})
}

func TestCallerCancellationIsNotRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := pipeline.New[int](mustNew[int](t, Config{}))
		ctx, cancel := context.WithCancel(t.Context())
		w := newWork(func(ctx context.Context) (int, error) {
			cancel()
			return 0, ctx.Err()
		})
		_, err := p.Execute(ctx, w.fn)
		assert.Len(t, w.attempts(), 1)
		e := stopError(t, err)
		assert.Equal(t, pipeline.Canceled, e.Reason)
		assert.ErrorIs(t, e.Cause, context.Canceled)
		assert.ErrorIs(t, err, context.Canceled)
	})
}

// A server that answers for the caller's deadline (gRPC's DeadlineExceeded)
// can beat that deadline here by a moment: the attempt is judged the
// caller's doing while ctx is not done yet. The stop says Deadline, as it
// would a moment later, not Canceled with no cause.
func TestDeadlineTheServerReportedFirstStopsWithDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		callers := func(int, error) (outcome.Verdict, bool) {
			return outcome.Verdict{Kind: outcome.Permanent, Canceled: true}, true
		}
		p := pipeline.New[int](mustNew[int](t, Config{})).With(pipeline.Options[int]{Classifier: callers})
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		_, err := p.Execute(ctx, newWork(fail(errBoom)).fn)
		e := stopError(t, err)
		assert.Equal(t, pipeline.Deadline, e.Reason)
		assert.ErrorIs(t, e.Cause, context.DeadlineExceeded)
		assert.Same(t, errBoom, e.Err)

		_, err = p.Execute(t.Context(), newWork(fail(errBoom)).fn)
		e = stopError(t, err)
		assert.Equal(t, pipeline.Canceled, e.Reason, "without a deadline, the caller's doing is a cancellation")
	})
}

func TestOurOwnTimeoutAroundTheRetryStopsItWithItsCause(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := pipeline.New[int](mustNew[int](t, Config{}))
		ours := fmt.Errorf("%w: call took longer than 50ms", outcome.ErrTimeout)
		ctx, cancel := context.WithTimeoutCause(t.Context(), 50*time.Millisecond, ours)
		defer cancel()
		w := newWork(func(ctx context.Context) (int, error) {
			<-ctx.Done()
			return 0, ctx.Err()
		})
		_, err := p.Execute(ctx, w.fn)
		assert.Len(t, w.attempts(), 1, "a done context is never retried")
		e := stopError(t, err)
		assert.Equal(t, pipeline.Deadline, e.Reason)
		assert.Same(t, ours, e.Cause)
		assert.ErrorIs(t, err, outcome.ErrTimeout)
	})
}

func TestLastValueAndVerdictAreReachable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const unavailable = 503
		retry := mustNew[int](t, Config{MaxAttempts: 2})
		var last pipeline.Result[int]
		outer := pipeline.PolicyFunc[int](func(ctx context.Context, next pipeline.Next[int]) pipeline.Result[int] {
			last = next.Run(ctx)
			return last
		})
		p := pipeline.New[int](outer, retry).With(pipeline.Options[int]{
			Classifier: func(v int, err error) (outcome.Verdict, bool) {
				return outcome.HTTPStatus(v, "", time.Now()), err == nil
			},
		})
		v, err := p.Execute(t.Context(), func(context.Context) (int, error) { return unavailable, nil })
		assert.Equal(t, unavailable, v, "the last response is still there to read")
		e := stopError(t, err)
		assert.Equal(t, pipeline.AttemptsExhausted, e.Reason)
		assert.Equal(t, 2, e.Attempts)
		ve, ok := errors.AsType[*pipeline.ValueError](e.Err)
		require.True(t, ok, "the attempt returned no error, so the stop says what the classifier judged: %v", e.Err)
		assert.Equal(t, outcome.Transient, ve.Verdict.Kind)
		assert.Contains(t, err.Error(), "judged transient")
		assert.Equal(t, outcome.Transient, last.Verdict.Kind, "outer stages read the last attempt's verdict")
	})
}

func TestAttemptNumbersReachInnerStages(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var seen []int
		inner := pipeline.PolicyFunc[int](func(ctx context.Context, next pipeline.Next[int]) pipeline.Result[int] {
			seen = append(seen, next.Attempt())
			return next.Run(ctx)
		})
		p := pipeline.New[int](mustNew[int](t, Config{MaxAttempts: 4}), inner)
		_, _ = p.Execute(t.Context(), newWork(fail(errBoom)).fn)
		assert.Equal(t, []int{1, 2, 3, 4}, seen)
	})
}

func TestSuccessIsReturnedUntouched(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var ev events
		p := pipeline.New[int](mustNew[int](t, Config{})).With(pipeline.Options[int]{OnEvent: ev.hook})
		w := newWork(fail(errBoom), succeed(7))
		v, err := p.Execute(t.Context(), w.fn)
		require.NoError(t, err)
		assert.Equal(t, 7, v)
		assert.Len(t, w.attempts(), 2)
		assert.Len(t, ev.scheduled(), 1)
		assert.Empty(t, ev.stops())
	})
}

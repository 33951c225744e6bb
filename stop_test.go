package pipeline_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/outcome"
)

func TestStopErrorMatchesItsReason(t *testing.T) {
	reasons := []pipeline.Reason{
		pipeline.DependencyUnavailable, pipeline.BudgetExhausted, pipeline.AttemptsExhausted,
		pipeline.Deadline, pipeline.Canceled, pipeline.Permanent, pipeline.HintBeyondDeadline,
		pipeline.RateLimited, pipeline.ConcurrencyLimited, pipeline.TooLittleTime,
	}
	for _, reason := range reasons {
		err := error(&pipeline.StopError{Reason: reason})
		for _, other := range reasons {
			assert.Equal(t, reason == other, errors.Is(err, other), "%v vs %v", reason, other)
		}
		assert.Equal(t, reason == pipeline.Deadline, errors.Is(err, context.DeadlineExceeded), "%v", reason)
		assert.Equal(t, reason == pipeline.Canceled, errors.Is(err, context.Canceled), "%v", reason)
		assert.Equal(t, reason.String(), reason.Error(), "a reason reads the same as an error and as a value")
	}
	wrapped := fmt.Errorf("checkout: %w", &pipeline.StopError{Reason: pipeline.BudgetExhausted})
	assert.ErrorIs(t, wrapped, pipeline.BudgetExhausted)
	assert.NotErrorIs(t, wrapped, pipeline.Reason(0), "a stop matches no reason but its own")
}

func TestStopErrorReachesLastErrorAndCause(t *testing.T) {
	last := errors.New("503 from upstream")
	cause := errors.New("shutting down")
	err := error(&pipeline.StopError{Stage: "retry", Reason: pipeline.Canceled, Attempts: 2, Err: last, Cause: cause})
	assert.ErrorIs(t, err, last)
	assert.ErrorIs(t, err, cause)
	assert.ErrorIs(t, err, context.Canceled)
	assert.EqualError(t, err, "pipeline: retry: canceled after 2 attempts (shutting down); last attempt: 503 from upstream")

	stop, ok := errors.AsType[*pipeline.StopError](err)
	assert.True(t, ok)
	assert.Equal(t, 2, stop.Attempts)
}

func TestStopErrorText(t *testing.T) {
	for _, tc := range []struct {
		err  pipeline.StopError
		want string
	}{
		{pipeline.StopError{Stage: "breaker", Reason: pipeline.DependencyUnavailable, RetryAfter: 12 * time.Second},
			"pipeline: breaker: dependency unavailable (retry after 12s)"},
		{pipeline.StopError{Reason: pipeline.AttemptsExhausted, Attempts: 1},
			"pipeline: attempts exhausted after 1 attempt"},
		{pipeline.StopError{Stage: "timeout", Reason: pipeline.Deadline, Cause: context.DeadlineExceeded, Err: context.DeadlineExceeded},
			"pipeline: timeout: deadline exceeded: context deadline exceeded"},
	} {
		assert.Equal(t, tc.want, tc.err.Error())
	}
}

func TestPanicErrorUnwrapsErrorValues(t *testing.T) {
	inner := errors.New("bad state")
	assert.ErrorIs(t, &pipeline.PanicError{Value: inner}, inner)
	assert.Nil(t, (&pipeline.PanicError{Value: "text"}).Unwrap())
}

func TestStopErrorUnwrapsItsOwnFields(t *testing.T) {
	var e pipeline.StopError
	require.Equal(t, unsafe.Offsetof(e.Err)+unsafe.Sizeof(e.Err), unsafe.Offsetof(e.Cause),
		"Unwrap views Err and Cause as one [2]error: keep them adjacent")
	last, cause := errors.New("last"), errors.New("cause")
	for _, tt := range []struct {
		e    pipeline.StopError
		want []error
	}{
		{pipeline.StopError{}, nil},
		{pipeline.StopError{Err: last}, []error{last}},
		{pipeline.StopError{Cause: cause}, []error{cause}},
		{pipeline.StopError{Err: last, Cause: cause}, []error{last, cause}},
	} {
		assert.Equal(t, tt.want, tt.e.Unwrap())
	}
}

func TestErrorsIsOnAStopErrorAllocatesNothing(t *testing.T) {
	err := error(&pipeline.StopError{Reason: pipeline.Deadline, Err: errors.New("last"), Cause: errors.New("cause")})
	target := errors.New("elsewhere")
	assert.Zero(t, testing.AllocsPerRun(100, func() {
		_ = errors.Is(err, target)
		_ = errors.Is(err, pipeline.DependencyUnavailable)
	}))
}

// Refuse reports the stop and returns it with the verdict a refusal needs:
// self-imposed Throttled with the hint, or, for a wait the caller's context
// ended, Permanent and Canceled.
func TestRefuse(t *testing.T) {
	var stopped []*pipeline.StopError
	refusal := &pipeline.StopError{Stage: "limit", Reason: pipeline.RateLimited, RetryAfter: 250 * time.Millisecond}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var results []pipeline.Result[int]
	p := pipeline.New[int](pipeline.PolicyFunc[int](func(ctx context.Context, next pipeline.Next[int]) pipeline.Result[int] {
		results = append(results, next.Refuse(ctx, refusal), next.Refuse(ctx, pipeline.Interrupted(ctx, pipeline.StageInfo{Kind: "limit"})))
		return results[0]
	})).With(pipeline.Options[int]{OnEvent: func(_ context.Context, _ pipeline.Source, e pipeline.Event) {
		stopped = append(stopped, e.(pipeline.Stopped).Err)
	}})
	_, err := p.Execute(ctx, func(context.Context) (int, error) { return 1, nil })
	assert.Same(t, refusal, err)
	require.Len(t, results, 2)
	assert.Equal(t, outcome.Verdict{Kind: outcome.Throttled, SelfImposed: true}.WithRetryAfter(250*time.Millisecond), results[0].Verdict)
	assert.Equal(t, outcome.Verdict{Kind: outcome.Permanent, Canceled: true}, results[1].Verdict)
	assert.Equal(t, pipeline.Canceled, results[1].Err.(*pipeline.StopError).Reason)
	assert.Len(t, stopped, 2)
}

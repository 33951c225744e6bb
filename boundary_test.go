package pipeline_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/breaker"
	"github.com/resilience-go/pipeline/policy/fallback"
	"github.com/resilience-go/pipeline/policy/retry"
)

// TestAStagesErrorWithoutAVerdictIsAFailure: a custom stage that returns an
// error and leaves the verdict out used to report a success to every stage
// outside it (the zero verdict is OK), so a breaker set to trip on one
// failure stayed closed after three (issue #27 item 1). The pipeline judges
// such a result where it hands it outward: a plain error as an attempt's
// error, a StopError as the stage's own refusal.
func TestAStagesErrorWithoutAVerdictIsAFailure(t *testing.T) {
	for _, tc := range []struct {
		name  string
		err   error
		trips bool
	}{
		{"a plain error is Transient", errors.New("down"), true},
		{"a marked error keeps its mark", outcome.MarkPermanent(errors.New("bad request")), false},
		{"a stop is the stage's own refusal", &pipeline.StopError{Stage: "gate", Reason: pipeline.DependencyUnavailable}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := breaker.New(breaker.Config{ConsecutiveFailures: 1})
			require.NoError(t, err)
			bare := pipeline.PolicyFunc[int](func(context.Context, pipeline.Next[int]) pipeline.Result[int] {
				return pipeline.Result[int]{Err: tc.err}
			})
			p := pipeline.New(breaker.Guard[int](b), bare)
			for range 3 {
				_, _ = p.Execute(t.Context(), func(context.Context) (int, error) { return 1, nil })
			}
			assert.Equal(t, tc.trips, b.State() == breaker.Open, "state %v", b.State())
		})
	}
}

// TestACanceledCallIsCanceledWhateverTheStages: a call whose caller cancels
// and whose work returns an error of its own used to come back with that
// error alone through a fallback, or through no stage, and as a Canceled stop
// through a retry (issue #27 item 2). What a canceled caller gets no longer
// depends on the stages: an error matching context.Canceled, with the work's
// error still reachable.
func TestACanceledCallIsCanceledWhateverTheStages(t *testing.T) {
	errInvalid := errors.New("invalid argument")
	fb, err := fallback.New(fallback.Config[any]{Func: func(context.Context, pipeline.Result[any]) (any, error) { return "default", nil }})
	require.NoError(t, err)
	retries, err := retry.New[any](retry.Config{})
	require.NoError(t, err)
	for name, stages := range map[string][]pipeline.Policy[any]{
		"no stage":   nil,
		"a fallback": {fb},
		"a retry":    {retries},
	} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			_, err := pipeline.New(stages...).Execute(ctx, func(context.Context) (any, error) {
				cancel()
				return nil, errInvalid
			})
			assert.ErrorIs(t, err, context.Canceled)
			assert.ErrorIs(t, err, errInvalid, "the work's own error stays reachable")
			stop, ok := errors.AsType[*pipeline.StopError](err)
			require.True(t, ok, "%T", err)
			assert.Equal(t, pipeline.Canceled, stop.Reason)
		})
	}
}

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

// TestAnUnknownKindIsRefusedNamingWhereItCameFrom: a classifier, a mark or a
// stage that gives a verdict of a kind that does not exist used to pass it
// on, and a 200 judged outcome.Kind(42) came back a success (issue #27 item
// 5). The result is now a Permanent failure whose error says where the kind
// came from.
func TestAnUnknownKindIsRefusedNamingWhereItCameFrom(t *testing.T) {
	errWork := errors.New("work")
	odd := outcome.Verdict{Kind: 42}
	oddStage := pipeline.PolicyFunc[int](func(ctx context.Context, next pipeline.Next[int]) pipeline.Result[int] {
		r := next.Run(ctx)
		r.Verdict = odd
		return r
	})
	for _, tc := range []struct {
		name       string
		stages     []pipeline.Policy[int]
		classifier outcome.Classifier[int]
		work       pipeline.Func[int]
		where      string
	}{
		{"a classifier, of a value", nil, func(int, error) (outcome.Verdict, bool) { return odd, true },
			func(context.Context) (int, error) { return 200, nil }, "the classifier (Options.Classifier"},
		{"a mark", nil, nil, func(context.Context) (int, error) { return 0, outcome.Mark(errWork, odd) }, "outcome.Mark"},
		{"a stage", []pipeline.Policy[int]{oddStage}, nil, func(context.Context) (int, error) { return 1, nil }, "a stage of its own"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var seen outcome.Verdict
			spy := pipeline.PolicyFunc[int](func(ctx context.Context, next pipeline.Next[int]) pipeline.Result[int] {
				r := next.Run(ctx)
				seen = r.Verdict
				return r
			})
			p := pipeline.New(append([]pipeline.Policy[int]{spy}, tc.stages...)...).With(pipeline.Options[int]{Classifier: tc.classifier})
			_, err := p.Execute(t.Context(), tc.work)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.where)
			assert.Contains(t, err.Error(), "gave outcome.Kind(42): outcome: not a kind of outcome")
			assert.ErrorIs(t, err, outcome.ErrUnknownKind)
			assert.Equal(t, outcome.Verdict{Kind: outcome.Permanent}, seen, "the stages outside read a Permanent failure")
		})
	}
}

package pipelineotel

import (
	"context"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/hedge"
)

// AttemptStage is the stage that gives every attempt, and every copy of a
// hedged one, a span of its own. Build one with [Attempts]; it is immutable
// and safe for concurrent use.
type AttemptStage[T any] struct {
	t *Telemetry
}

// Attempts returns a stage that starts a span named "resilience.attempt",
// a child of the span in its context, for every attempt that passes through
// it, with the attributes resilience.pipeline.name, resilience.attempt and
// resilience.hedge.copy (0 for the attempt itself, 1, 2, ... for its hedges),
// and on its end resilience.verdict and, for a failed attempt (not one
// canceled: a hedged copy that lost, a caller that gave up), an Error
// status. The pipeline's events of the attempt (its AttemptFinished, a
// timeout inside) then become span events of that span.
//
// Place it inside the hedge stage, where each copy's context says which copy
// it is (hedge.CopyOf), or innermost in a pipeline without a hedge. The
// standard preset has no place for it; build the card by hand
// (standard.Compose) to use it. Hedge wins and copy numbers on attempt events
// need no such stage: they come from the hedge's own events and contexts.
func Attempts[T any](t *Telemetry) *AttemptStage[T] {
	return &AttemptStage[T]{t: t}
}

// Stage says that a is a telemetry stage: kind "otel", name "attempts".
func (a *AttemptStage[T]) Stage() pipeline.StageInfo {
	return pipeline.StageInfo{Kind: "otel", Name: "attempts"}
}

// Execute runs the attempt in a span of its own.
func (a *AttemptStage[T]) Execute(ctx context.Context, next pipeline.Next[T]) pipeline.Result[T] {
	copyNo, _ := hedge.CopyOf(ctx)
	src := next.Source()
	ctx, span := a.t.tracer.Start(ctx, SpanAttempt, trace.WithAttributes(
		AttrPipeline.String(src.Pipeline),
		AttrAttempt.Int(next.Attempt()),
		AttrHedgeCopy.Int(copyNo),
	))
	ended := false
	defer func() {
		if !ended { // the work panicked: the panic goes on, the span ends
			span.SetStatus(codes.Error, "panic")
			span.End()
		}
	}()
	r := next.Run(ctx)
	ended = true
	span.SetAttributes(verdictKVs(r.Verdict)...)
	if r.Verdict.Kind != outcome.OK && !r.Verdict.Canceled { // a copy that lost, or the caller's cancellation, is no error
		span.SetStatus(codes.Error, verdicts[verdictIndex(r.Verdict.Kind)])
	}
	span.End()
	return r
}

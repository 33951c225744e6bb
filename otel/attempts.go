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
// canceled: a hedged copy that lost, a caller that gave up), an Error status. The pipeline's events of the attempt (its AttemptFinished, a
// timeout inside) then become span events of that span, and a hedge whose
// result comes back acceptable counts in resilience.hedge.wins.
//
// Place it directly inside the hedge stage, where it sees each copy's own
// context and tells the copies apart (a hedged copy's number comes from the
// hedge.Hedged event, so the pipeline's event hook must be t's), or innermost
// in a pipeline without a hedge. The standard preset has no place for it;
// build the card by hand (standard.Compose) to use it.
func Attempts[T any](t *Telemetry) *AttemptStage[T] {
	t.attemptStages.Add(1)
	return &AttemptStage[T]{t: t}
}

// Stage says that a is a telemetry stage: kind "otel", name "attempts".
func (a *AttemptStage[T]) Stage() pipeline.StageInfo {
	return pipeline.StageInfo{Kind: "otel", Name: "attempts"}
}

// Execute runs the attempt in a span of its own.
func (a *AttemptStage[T]) Execute(ctx context.Context, next pipeline.Next[T]) pipeline.Result[T] {
	copyNo := 0
	if v, ok := a.t.copies.LoadAndDelete(ctx); ok {
		copyNo = v.(int)
	}
	src := next.Source()
	ctx, span := a.t.tracer.Start(ctx, SpanAttempt, trace.WithAttributes(
		AttrPipeline.String(src.Pipeline),
		AttrAttempt.Int(next.Attempt()),
		AttrHedgeCopy.Int(copyNo),
	))
	if copyNo > 0 {
		ctx = context.WithValue(ctx, copyKey{}, copyNo)
	}
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
	if copyNo > 0 && hedge.Acceptable(r.Verdict) {
		a.t.hedgeWins.Add(ctx, 1, a.t.calls.get(src.Pipeline).win().add...)
	}
	return r
}

// copyKey is the context key of a hedged copy's number.
type copyKey struct{}

// copyOf returns the number of the hedged copy ctx belongs to, as an
// Attempts stage marked it; ok is false for the attempt itself, or where no
// such stage is.
func copyOf(ctx context.Context) (n int, ok bool) {
	n, ok = ctx.Value(copyKey{}).(int)
	return n, ok
}

// markCopy notes that ctx is the context of hedged copy n, for the Attempts
// stage that will run it, until the copy is over.
func (t *Telemetry) markCopy(ctx context.Context, n int) {
	t.copies.Store(ctx, n)
	context.AfterFunc(ctx, func() { t.copies.Delete(ctx) })
}

package throttle

import (
	"context"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/criticality"
)

// Policy is the pipeline stage that asks a [Throttle] before every call or
// attempt that passes through it and records how each ended. Build one with
// [Guard]. It is immutable and safe for concurrent use.
type Policy[T any] struct {
	t *Throttle
}

// Guard returns a stage that asks t for everything that passes through it.
// Placed inside a retry stage, it counts and may refuse every attempt,
// retries included, as the book's throttle counts every request the client
// sends. Guard panics if t is nil or was not built by [New].
func Guard[T any](t *Throttle) *Policy[T] {
	if t == nil {
		panic("throttle: Guard: throttle is nil (did you ignore the error from throttle.New?)")
	}
	if !t.built() {
		panic(notBuilt)
	}
	return &Policy[T]{t: t}
}

// Stage says that p is a throttle stage, named after its throttle.
func (p *Policy[T]) Stage() pipeline.StageInfo { return p.t.Stage() }

// Execute runs the rest of the pipeline if the throttle admits it. In order:
//
//   - A ctx already done asks nothing and counts nothing: Execute returns
//     pipeline.Interrupted (Canceled or Deadline) at once.
//   - The throttle refuses (see [Throttle.Admit]): nothing inside runs, and
//     Execute returns a *pipeline.StopError of Stage "throttle" and Reason
//     pipeline.DependencyUnavailable, with no retry-after hint and a
//     self-imposed Throttled verdict, so that no breaker counts it and no
//     retry budget pays for it, and a retry stage outside stops rather than
//     retry it. Every refusal shares one StopError: treat it as read-only.
//     This costs no allocation.
//   - Otherwise the rest runs, and its verdict is recorded with the
//     throttle (see [Throttle.Record]); this costs no allocation either. An
//     attempt that panics (or calls runtime.Goexit) is recorded as nothing,
//     as a canceled one is: a panic is more often a bug of ours than the
//     dependency's answer. The panic goes on.
//
// Every refusal emits pipeline.Stopped.
func (p *Policy[T]) Execute(ctx context.Context, next pipeline.Next[T]) pipeline.Result[T] {
	if ctx.Err() != nil {
		return next.Refuse(ctx, pipeline.Interrupted(ctx, p.Stage()))
	}
	tk, ok := p.t.admit(criticality.From(ctx))
	if !ok {
		return next.Refuse(ctx, p.t.refused)
	}
	r := next.Run(ctx) // a panic records nothing: an admission holds nothing to give back
	p.t.Record(tk, r.Verdict)
	return r
}

package adaptive

import (
	"context"
	"sync"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/outcome"
)

// Policy is the pipeline stage that runs everything inside it in a slot of a
// [Limiter], and teaches the limiter from each call's outcome. Build one with
// [Guard]. It is immutable and safe for concurrent use.
type Policy[T any] struct {
	l *Limiter
}

// Guard returns a stage that runs what passes through it in a slot of l.
// Guard panics if l is nil.
func Guard[T any](l *Limiter) *Policy[T] {
	if l == nil {
		panic("adaptive: Guard: limiter is nil (did you ignore the error from adaptive.New?)")
	}
	return &Policy[T]{l: l}
}

// Stage says that p is an adaptive-limit stage, named after its limiter.
func (p *Policy[T]) Stage() pipeline.StageInfo { return p.l.Stage() }

// Execute runs the rest of the pipeline in a slot of the limiter. In order:
//
//   - A ctx already done takes no slot: Execute returns pipeline.Interrupted
//     at once.
//   - A slot is free and nobody queues: the rest runs at once; this costs no
//     allocation.
//   - The queue has room: the call waits for a slot for at most
//     Config.MaxWait, emits [Waited] once it has one, and runs; if ctx ends
//     first, Execute returns pipeline.Interrupted.
//   - Otherwise, or when the wait runs out, the call is refused: a
//     *pipeline.StopError of Stage "adaptive" whose RetryAfter is the median
//     latency measured at the last revision (the time a slot is typically
//     held), with a self-imposed Throttled verdict carrying the same hint, so
//     that no breaker counts it, no retry budget pays for it, and a retry
//     stage outside stops rather than retry it. Refusals with the same hint
//     share one StopError: treat it as read-only.
//
// The call's duration, from its slot to its return, and its verdict teach the
// limiter (see [Limiter.Done]); a revision that moves the limit or its
// baseline is emitted as a [Revision]. Every stop emits pipeline.Stopped. The
// slot is given back when Execute returns or, if the pipeline keeps returned
// values alive ([pipeline.Options].WhenReleased), when the value is released.
// A panic inside gives the slot back, and teaches nothing.
func (p *Policy[T]) Execute(ctx context.Context, next pipeline.Next[T]) pipeline.Result[T] {
	if ctx.Err() != nil {
		return next.Refuse(ctx, pipeline.Interrupted(ctx, p.Stage()))
	}
	t, waited, err := p.l.acquire(ctx)
	if err != nil {
		return next.Refuse(ctx, err.(*pipeline.StopError))
	}
	if waited >= 0 && next.Observed() {
		next.Emit(ctx, Waited{Wait: waited, Queued: p.l.Queued(), Limit: p.l.Limit()})
	}
	done := false
	defer func() {
		if !done { // the work panicked
			p.l.done(ctx, t, outcome.Verdict{Kind: outcome.Permanent, Canceled: true}, true)
		}
	}()
	r := next.Run(ctx)
	done = true
	holds := next.Holds()
	rev, moved := p.l.done(ctx, t, r.Verdict, !holds)
	if moved && next.Observed() {
		next.Emit(ctx, rev)
	}
	if !holds {
		return r
	}
	return next.Hold(r, sync.OnceFunc(func() { p.l.slots.Release(ctx) }))
}

package bulkhead

import (
	"context"
	"sync"

	"github.com/resilience-go/pipeline"
)

// Policy is the pipeline stage that runs everything inside it in a slot of a
// [Bulkhead]. Build one with [Guard]. It is immutable and safe for concurrent
// use.
type Policy[T any] struct {
	b *Bulkhead
}

// Guard returns a stage that runs what passes through it in a slot of b.
// Guard panics if b is nil.
func Guard[T any](b *Bulkhead) *Policy[T] {
	if b == nil {
		panic("bulkhead: Guard: bulkhead is nil (did you ignore the error from bulkhead.New?)")
	}
	return &Policy[T]{b: b}
}

// Stage says that p is a bulkhead stage, named after its bulkhead.
func (p *Policy[T]) Stage() pipeline.StageInfo { return p.b.Stage() }

// Execute runs the rest of the pipeline in a slot of the bulkhead. In order:
//
//   - A ctx already done takes no slot: Execute returns pipeline.Interrupted
//     (Canceled or Deadline) at once.
//   - A slot is free and nobody queues: the rest runs at once; this costs no
//     allocation.
//   - The queue has room: the call waits for a slot, first come first
//     served, for at most Config.MaxWait; once it has one it emits [Waited]
//     and runs. If ctx ends first, Execute returns pipeline.Interrupted.
//   - Otherwise, or when the wait runs out, the call is refused: a
//     *pipeline.StopError of Stage "bulkhead" with no retry-after hint (when
//     a slot frees depends on calls the bulkhead cannot see into), with a
//     self-imposed Throttled verdict, so that no breaker counts it, no retry
//     budget pays for it, and a retry stage outside stops rather than retry
//     it. Every refusal of one bulkhead shares one StopError: treat it as
//     read-only.
//
// Every stop emits pipeline.Stopped. The slot is given back when Execute
// returns, or, if the pipeline keeps returned values alive
// ([pipeline.Options].WhenReleased, as for an HTTP response whose body is
// still being read), when the value is released. A panic inside gives the
// slot back as it unwinds.
func (p *Policy[T]) Execute(ctx context.Context, next pipeline.Next[T]) pipeline.Result[T] {
	if ctx.Err() != nil {
		return next.Refuse(ctx, pipeline.Interrupted(ctx, p.Stage()))
	}
	_, waited, err := p.b.acquire(ctx)
	if err != nil {
		return next.Refuse(ctx, err.(*pipeline.StopError))
	}
	if waited >= 0 && next.Observed() {
		next.Emit(ctx, Waited{Wait: waited})
	}
	if !next.Holds() {
		defer p.b.Release(ctx)
		return next.Run(ctx)
	}
	release := sync.OnceFunc(func() { p.b.Release(ctx) })
	held := false
	defer func() {
		if !held { // the work panicked
			release()
		}
	}()
	r := next.Run(ctx)
	held = true
	return next.Hold(r, release)
}

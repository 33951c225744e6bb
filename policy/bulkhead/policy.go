package bulkhead

import (
	"context"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/criticality"
)

// Guard returns a stage that runs what passes through it in a slot of b:
// the stage [pipeline.Guard] makes of b (see [pipeline.GatePolicy.Execute]
// for what every such stage does). In order:
//
//   - A ctx already done takes no slot: the stage returns
//     pipeline.Interrupted (Canceled or Deadline) at once.
//   - A slot is free and nobody queues: the rest runs at once; this costs no
//     allocation.
//   - The queue has room: the call waits for a slot, first come first
//     served, for at most Config.MaxWait; once it has one it emits [pipeline.Waited]
//     and runs. If ctx ends first, the stage returns pipeline.Interrupted.
//   - Otherwise, or when the wait runs out, the call is refused: a
//     *pipeline.StopError of Stage "bulkhead" with no retry-after hint (when
//     a slot frees depends on calls the bulkhead cannot see into), with a
//     self-imposed Throttled verdict, so that no breaker counts it, no retry
//     budget pays for it, and a retry stage outside stops rather than retry
//     it. Every refusal of one bulkhead shares one StopError: treat it as
//     read-only.
//
// Every stop emits pipeline.Stopped. The slot is given back when the stage
// returns, or, if the pipeline keeps returned values alive
// ([pipeline.Options].WhenReleased, as for an HTTP response whose body is
// still being read), when the value is released. A panic inside gives the
// slot back as it unwinds.
//
// Guard panics if b is nil.
func Guard[T any](b *Bulkhead) *pipeline.GatePolicy[T] {
	if b == nil {
		panic("bulkhead: Guard: bulkhead is nil (did you ignore the error from bulkhead.New?)")
	}
	return pipeline.Guard[T]((*gate)(b))
}

// gate is a Bulkhead seen as a pipeline.Gate, whose Release would clash
// with the Bulkhead's own. Its permits carry nothing: a slot is given back
// with the call's context, which names its tenant.
type gate Bulkhead

// Stage says that the stage is a bulkhead stage, named after its bulkhead.
func (g *gate) Stage() pipeline.StageInfo { return (*Bulkhead)(g).Stage() }

// Admit takes a slot for the call of ctx, or queues for one, and reports a
// wait. It is [Bulkhead.Acquire], written here so that the stage, which
// calls it through pipeline.Gate, pays no call of a wrapper.
func (g *gate) Admit(ctx context.Context, ev pipeline.Events) (pipeline.Permit, *pipeline.StopError) {
	b := (*Bulkhead)(g)
	l, t := criticality.From(ctx), b.tenantOf(ctx)
	if _, ok := b.try(l, t); ok {
		return pipeline.Permit{}, nil
	}
	waited, stop := b.wait(ctx, l, t)
	if stop != nil {
		return pipeline.Permit{}, stop
	}
	if waited >= 0 && ev.Observed() {
		ev.Emit(ctx, pipeline.Waited{Wait: waited})
	}
	return pipeline.Permit{}, nil
}

package adaptive

import (
	"context"
	"time"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/outcome"
)

// Guard returns a stage that runs what passes through it in a slot of l,
// and teaches l from each call's outcome: the stage [pipeline.Guard] makes
// of l, a [pipeline.Learner] (see [pipeline.GatePolicy.Execute] for what
// every such stage does). In order:
//
//   - A ctx already done takes no slot: the stage returns
//     pipeline.Interrupted at once.
//   - A slot is free and nobody queues: the rest runs at once; this costs no
//     allocation.
//   - The queue has room: the call waits for a slot for at most
//     Config.MaxWait, emits [pipeline.Waited] once it has one, and runs; if ctx ends
//     first, the stage returns pipeline.Interrupted.
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
// slot is given back when the stage returns or, if the pipeline keeps
// returned values alive ([pipeline.Options].WhenReleased), when the value is
// released. A panic inside gives the slot back, and teaches nothing.
//
// Guard panics if l is nil.
func Guard[T any](l *Limiter) *pipeline.GatePolicy[T] {
	if l == nil {
		panic("adaptive: Guard: limiter is nil (did you ignore the error from adaptive.New?)")
	}
	return pipeline.Guard[T]((*gate)(l))
}

// gate is a Limiter seen as a pipeline.Learner, whose Done would clash
// with the Limiter's own. A permit's Value is the time its call got its
// slot, on the estimator's clock; the slot is given back with the call's
// context, which names its tenant and level.
type gate Limiter

// Stage says that the stage is an adaptive-limit stage, named after its
// limiter.
func (g *gate) Stage() pipeline.StageInfo { return (*Limiter)(g).Stage() }

// Admit takes a slot for the call of ctx, or queues for one, and reports a
// wait.
func (g *gate) Admit(ctx context.Context, ev pipeline.Events) (pipeline.Permit, *pipeline.StopError) {
	l := (*Limiter)(g)
	t, waited, err := l.acquire(ctx)
	if err != nil {
		return pipeline.Permit{}, err.(*pipeline.StopError)
	}
	if waited >= 0 && ev.Observed() {
		ev.Emit(ctx, pipeline.Waited{Wait: waited, Queued: l.Queued(), Limit: l.Limit()})
	}
	return pipeline.Permit{Value: int64(t.start)}, nil
}

// Done teaches the limiter from the call of p, and reports a revision that
// moved the limit.
func (g *gate) Done(ctx context.Context, p pipeline.Permit, v outcome.Verdict, ev pipeline.Events) {
	rev, moved := (*Limiter)(g).done(ctx, Ticket{start: time.Duration(p.Value), held: true}, v, false)
	if moved && ev.Observed() {
		ev.Emit(ctx, rev)
	}
}

// Release gives the slot of the call of ctx back.
func (g *gate) Release(ctx context.Context, _ pipeline.Permit) { g.slots.Release(ctx) }

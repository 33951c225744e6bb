package throttle

import (
	"context"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/criticality"
	"github.com/resilience-go/pipeline/outcome"
)

// Guard returns a stage that asks t before everything that passes through
// it and records how each ended: the stage [pipeline.Guard] makes of t, a
// [pipeline.Learner] (see [pipeline.GatePolicy.Execute] for what every such
// stage does). Placed inside a retry stage, it counts and may refuse every
// attempt, retries included, as the book's throttle counts every request
// the client sends. In order:
//
//   - A ctx already done asks the throttle nothing and counts nothing: the
//     stage returns pipeline.Interrupted (Canceled or Deadline) at once.
//   - The throttle refuses the attempt (see [Throttle.Admit]; an attempt
//     marked Critical with package criticality is refused with p² where p
//     is the throttle's rejection probability, a Sheddable one with √p, at
//     most Config.MaxRejection, any other with p): nothing inside runs, and
//     the stage returns a *pipeline.StopError of Stage "throttle" and Reason
//     pipeline.DependencyUnavailable, with no retry-after hint and a
//     self-imposed Throttled verdict, so that no breaker counts it, no
//     retry budget pays for it, and a retry stage outside stops rather than
//     retry it. Every refusal of one throttle shares one StopError: treat
//     it as read-only. A refusal allocates nothing.
//   - Otherwise the rest runs, and its verdict is recorded with the
//     throttle (see [Throttle.Record]), without an allocation either. An
//     admission holds nothing to give back, so an attempt that panics (or
//     calls runtime.Goexit) is recorded as nothing, as a canceled one is: a
//     panic is more often a bug of ours than the dependency's answer. The
//     panic goes on.
//
// Every refusal emits pipeline.Stopped; the stage has no events of its
// own.
//
// Guard panics if t is nil or was not built by [New].
func Guard[T any](t *Throttle) *pipeline.GatePolicy[T] {
	if t == nil {
		panic("throttle: Guard: throttle is nil (did you ignore the error from throttle.New?)")
	}
	if !t.built() {
		panic(notBuilt)
	}
	return pipeline.Guard[T]((*gate)(t))
}

// gate is a Throttle seen as a pipeline.Learner, whose Admit would clash
// with the Throttle's own. A permit's Value is its Ticket's slice, and the
// permit is Spent: an admission takes nothing that must be given back, so
// the stage calls no Release, and records a verdict only for an attempt
// that returned.
type gate Throttle

// Stage says that the stage is a throttle stage, named after its throttle.
func (g *gate) Stage() pipeline.StageInfo { return (*Throttle)(g).Stage() }

// Admit asks the throttle to admit the attempt of ctx, at the odds of its
// criticality level, or returns the throttle's one refusal. It never waits
// and emits nothing.
func (g *gate) Admit(ctx context.Context, _ pipeline.Events) (pipeline.Permit, *pipeline.StopError) {
	t := (*Throttle)(g)
	tk, ok := t.admit(criticality.From(ctx))
	if !ok {
		return pipeline.Permit{}, t.refused
	}
	return pipeline.Permit{Value: tk.slice, Spent: true}, nil
}

// Done records the verdict v of the attempt admitted with p.
func (g *gate) Done(_ context.Context, p pipeline.Permit, v outcome.Verdict, _ pipeline.Events) {
	(*Throttle)(g).Record(Ticket{slice: p.Value}, v)
}

// Release does nothing: the stage never calls it, since every permit of
// the throttle is Spent.
func (*gate) Release(context.Context, pipeline.Permit) {}

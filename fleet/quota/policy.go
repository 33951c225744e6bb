package quota

import (
	"context"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/criticality"
)

// Guard returns a stage that takes a token from q for everything that
// passes through it: the stage [pipeline.Guard] makes of q (see
// [pipeline.GatePolicy.Execute] for what every such stage does). Placed
// inside a retry stage it limits attempts, outside it whole calls. In order:
//
//   - A ctx already done takes no token: the stage returns
//     pipeline.Interrupted (Canceled or Deadline) at once.
//   - The quota admits the call, as [Quota.Allow] does but for the call's
//     level (criticality.From; see Config.Shares): the rest runs at
//     once. This never waits on Redis and costs no allocation.
//   - The process holds no token (or calls are waiting for theirs),
//     Config.MaxWait is above zero, and the next token, as this process
//     last heard from Redis, comes within MaxWait and before ctx's
//     deadline: the call waits for a token on the quota's clock, behind the
//     calls already waiting, first come, first served; once one is handed
//     to it (by a fetch or, while Redis is down, from the local share), it
//     emits [pipeline.Waited] and runs. It takes nothing while it waits: if ctx
//     ends first, the stage returns pipeline.Interrupted, and a token handed
//     to it as ctx ended goes on to the next call; if MaxWait or the
//     deadline passes first, if a fetch reports that the next token comes
//     too late, or if the quota is closed, the call is refused as below.
//   - Otherwise the call is refused at once: a *pipeline.StopError of Stage
//     "quota" and Reason pipeline.RateLimited whose RetryAfter is the wait
//     Allow reported, rounded up to the millisecond, with a self-imposed
//     Throttled verdict carrying the same hint, so that no breaker counts
//     it and no retry budget pays for it. Refusals with the same hint share
//     one StopError: treat it as read-only.
//
// Every stop emits pipeline.Stopped. A token is spent: nothing is given back
// when the call returns.
//
// Guard panics if q is nil.
func Guard[T any](q *Quota) *pipeline.GatePolicy[T] {
	if q == nil {
		panic("quota: Guard: quota is nil (did you ignore the error from quota.New?)")
	}
	return pipeline.Guard[T]((*gate)(q))
}

// gate is a Quota seen as a pipeline.Gate. Its permits are spent.
type gate Quota

// Stage says that the stage is a quota stage, named after its quota.
func (g *gate) Stage() pipeline.StageInfo { return (*Quota)(g).Stage() }

// Admit takes a token for the call of ctx, or waits for one, and reports a
// wait.
func (g *gate) Admit(ctx context.Context, ev pipeline.Events) (pipeline.Permit, *pipeline.StopError) {
	q := (*Quota)(g)
	wait, ok := q.allow(criticality.From(ctx))
	if ok {
		return pipeline.Permit{Spent: true}, nil
	}
	limit := q.waitLimit(ctx)
	if wait > limit {
		return pipeline.Permit{}, q.refusal(wait)
	}
	start := q.s.clock.Now()
	if wait, ok = q.await(ctx, limit); !ok {
		if ctx.Err() != nil {
			return pipeline.Permit{}, pipeline.Interrupted(ctx, q.Stage())
		}
		return pipeline.Permit{}, q.refusal(wait)
	}
	if ev.Observed() {
		ev.Emit(ctx, pipeline.Waited{Wait: q.s.clock.Since(start)})
	}
	return pipeline.Permit{Spent: true}, nil
}

// Release is never called: the permits are spent.
func (g *gate) Release(context.Context, pipeline.Permit) {}

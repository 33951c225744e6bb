package ratelimit

import (
	"context"
	"time"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/criticality"
)

// Guard returns a stage that takes a token from l for everything that passes
// through it: the stage [pipeline.Guard] makes of l (see
// [pipeline.GatePolicy.Execute] for what every such stage does). Placed
// inside a retry stage it limits attempts, retries included; outside, whole
// calls. In order:
//
//   - A ctx already done takes no token: the stage returns
//     pipeline.Interrupted (Canceled or Deadline) at once.
//   - A token is there: the rest runs at once; this costs no allocation.
//   - The next token comes within Config.MaxWait and before ctx's deadline:
//     the call waits for it on the limiter's clock, emits [pipeline.Waited], and runs.
//     If ctx ends first, the token goes back to the limiter (unless a later
//     call has been promised one since) and the stage returns
//     pipeline.Interrupted.
//   - Otherwise the call is refused at once: a *pipeline.StopError of Stage
//     "ratelimit" whose RetryAfter is the time until the next token, rounded
//     up to the millisecond, with a self-imposed Throttled verdict carrying
//     the same hint, so that no breaker counts it and no retry budget pays for
//     it, and a retry stage outside stops rather than retry it. Refusals with
//     the same hint share one StopError: treat it as read-only.
//
// Every stop emits pipeline.Stopped. A token is spent: nothing is given back
// when the call returns.
//
// Guard panics if l is nil.
func Guard[T any](l *Limiter) *pipeline.GatePolicy[T] {
	if l == nil {
		panic("ratelimit: Guard: limiter is nil (did you ignore the error from ratelimit.New?)")
	}
	return pipeline.Guard[T]((*gate)(l))
}

// gate is a Limiter seen as a pipeline.Gate. Its permits are spent.
type gate Limiter

// Stage says that the stage is a rate-limit stage, named after its limiter.
func (g *gate) Stage() pipeline.StageInfo { return (*Limiter)(g).Stage() }

// Admit takes a token for the call of ctx, or waits for one, and reports a
// wait.
func (g *gate) Admit(ctx context.Context, ev pipeline.Events) (pipeline.Permit, *pipeline.StopError) {
	l := (*Limiter)(g)
	limit := l.maxWait
	if limit > 0 {
		if deadline, ok := ctx.Deadline(); ok {
			// Deadlines run on real time (the bubble's, under testing/synctest).
			limit = max(min(limit, time.Until(deadline)), 0)
		}
	}
	level := criticality.Default
	if l.levelled { // the level changes something: read it
		level = criticality.From(ctx)
	}
	wait, res, ok := l.reserve(limit, level)
	if !ok {
		return pipeline.Permit{}, l.sharedRefusal(wait)
	}
	if wait > 0 {
		if !l.sleep(ctx, wait) {
			l.cancel(res)
			return pipeline.Permit{}, pipeline.Interrupted(ctx, l.Stage())
		}
		if ev.Observed() {
			ev.Emit(ctx, pipeline.Waited{Wait: wait})
		}
	}
	return pipeline.Permit{Spent: true}, nil
}

// Release is never called: the permits are spent.
func (g *gate) Release(context.Context, pipeline.Permit) {}

// sleep waits d on the limiter's clock and reports true, or returns false as
// soon as ctx is done.
func (l *Limiter) sleep(ctx context.Context, d time.Duration) bool {
	var fired <-chan time.Time
	if c := l.clock; c != nil {
		t := c.NewTimer(d)
		defer t.Stop()
		fired = t.Chan()
	} else {
		t := time.NewTimer(d)
		defer t.Stop()
		fired = t.C
	}
	select {
	case <-fired:
		return true
	case <-ctx.Done():
		return false
	}
}

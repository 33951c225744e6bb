package ratelimit

import (
	"context"
	"time"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/criticality"
)

// Policy is the pipeline stage that takes a token from a [Limiter] for every
// call or attempt that passes through it. Build one with [Guard]. It is
// immutable and safe for concurrent use.
type Policy[T any] struct {
	l *Limiter
}

// Guard returns a stage that takes a token from l for everything that passes
// through it. Placed inside a retry stage it limits attempts, retries
// included; outside, whole calls. Guard panics if l is nil.
func Guard[T any](l *Limiter) *Policy[T] {
	if l == nil {
		panic("ratelimit: Guard: limiter is nil (did you ignore the error from ratelimit.New?)")
	}
	return &Policy[T]{l: l}
}

// Stage says that p is a rate-limit stage, named after its limiter.
func (p *Policy[T]) Stage() pipeline.StageInfo { return p.l.Stage() }

// Execute runs the rest of the pipeline once it has a token. In order:
//
//   - A ctx already done takes no token: Execute returns
//     pipeline.Interrupted (Canceled or Deadline) at once.
//   - A token is there: the rest runs at once; this costs no allocation.
//   - The next token comes within Config.MaxWait and before ctx's deadline:
//     the call waits for it on the limiter's clock, emits [Waited], and runs.
//     If ctx ends first, the token goes back to the limiter (unless a later
//     call has been promised one since) and Execute returns
//     pipeline.Interrupted.
//   - Otherwise the call is refused at once: a *pipeline.StopError of Stage
//     "ratelimit" whose RetryAfter is the time until the next token, rounded
//     up to the millisecond, with a self-imposed Throttled verdict carrying
//     the same hint, so that no breaker counts it and no retry budget pays for
//     it, and a retry stage outside stops rather than retry it. Refusals with
//     the same hint share one StopError: treat it as read-only.
//
// Every stop emits pipeline.Stopped.
func (p *Policy[T]) Execute(ctx context.Context, next pipeline.Next[T]) pipeline.Result[T] {
	if ctx.Err() != nil {
		return p.interrupted(ctx, next)
	}
	limit := p.l.maxWait
	if limit > 0 {
		if deadline, ok := ctx.Deadline(); ok {
			// Deadlines run on real time (the bubble's, under testing/synctest).
			limit = max(min(limit, time.Until(deadline)), 0)
		}
	}
	level := criticality.Default
	if p.l.levelled { // the level changes something: read it
		level = criticality.From(ctx)
	}
	wait, res, ok := p.l.reserve(limit, level)
	if !ok {
		return next.Refuse(ctx, p.l.sharedRefusal(wait))
	}
	if wait > 0 {
		if !p.sleep(ctx, wait) {
			p.l.cancel(res)
			return p.interrupted(ctx, next)
		}
		if next.Observed() {
			next.Emit(ctx, Waited{Wait: wait})
		}
	}
	return next.Run(ctx)
}

// sleep waits d on the limiter's clock and reports true, or returns false as
// soon as ctx is done.
func (p *Policy[T]) sleep(ctx context.Context, d time.Duration) bool {
	var fired <-chan time.Time
	if c := p.l.clock; c != nil {
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

// interrupted stops a call whose ctx is done before it got its token.
func (p *Policy[T]) interrupted(ctx context.Context, next pipeline.Next[T]) pipeline.Result[T] {
	return next.Refuse(ctx, pipeline.Interrupted(ctx, p.Stage()))
}

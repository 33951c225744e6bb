package fleet

import (
	"context"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/criticality"
)

// QuotaPolicy is the pipeline stage that takes a token from a [Quota] for
// every call or attempt that passes through it. Build one with [QuotaGuard].
// It is immutable and safe for concurrent use.
type QuotaPolicy[T any] struct {
	q *Quota
}

// QuotaGuard returns a stage that takes a token from q for everything that
// passes through it: placed inside a retry stage it limits attempts, outside
// it whole calls. QuotaGuard panics if q is nil.
func QuotaGuard[T any](q *Quota) *QuotaPolicy[T] {
	if q == nil {
		panic("fleet: QuotaGuard: quota is nil (did you ignore the error from fleet.NewQuota?)")
	}
	return &QuotaPolicy[T]{q: q}
}

// Stage says that p is a quota stage, named after its quota.
func (p *QuotaPolicy[T]) Stage() pipeline.StageInfo { return p.q.Stage() }

// Execute runs the rest of the pipeline if the quota admits it. In order:
//
//   - A ctx already done takes no token: Execute returns
//     pipeline.Interrupted (Canceled or Deadline) at once.
//   - The quota admits the call ([Quota.Allow], by the share of the lease
//     its level may spend: QuotaConfig.Shares): the rest runs at once.
//     This never waits on Redis and costs no allocation.
//   - The process holds no token (or calls are waiting for theirs),
//     QuotaConfig.MaxWait is above zero, and the next token, as this process
//     last heard from Redis, comes within MaxWait and before ctx's
//     deadline: the call waits for a token on the quota's clock, behind the
//     calls already waiting, first come, first served; once one is handed
//     to it (by a fetch or, while Redis is down, from the local share), it
//     emits [QuotaWaited] and runs. It takes nothing while it waits: if ctx
//     ends first, Execute returns pipeline.Interrupted, and a token handed
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
// Every stop emits pipeline.Stopped.
func (p *QuotaPolicy[T]) Execute(ctx context.Context, next pipeline.Next[T]) pipeline.Result[T] {
	if ctx.Err() != nil {
		return next.Refuse(ctx, pipeline.Interrupted(ctx, p.Stage()))
	}
	wait, ok := p.q.allow(criticality.From(ctx))
	if !ok {
		limit := p.q.waitLimit(ctx)
		if wait > limit {
			return next.Refuse(ctx, p.q.refusal(wait))
		}
		start := p.q.s.clock.Now()
		if wait, ok = p.q.await(ctx, limit); !ok {
			if ctx.Err() != nil {
				return next.Refuse(ctx, pipeline.Interrupted(ctx, p.Stage()))
			}
			return next.Refuse(ctx, p.q.refusal(wait))
		}
		if next.Observed() {
			next.Emit(ctx, QuotaWaited{Wait: p.q.s.clock.Since(start)})
		}
	}
	return next.Run(ctx)
}

package breaker

import (
	"context"
	"time"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/internal/kind"
	"github.com/resilience-go/pipeline/outcome"
)

// Policy is the pipeline stage that guards every attempt with a [Breaker]. Build
// one with [Guard]. It is immutable and safe for concurrent use.
type Policy[T any] struct {
	b       *Breaker
	untimed bool // see GuardUntimed
}

// Guard returns a stage that asks b before every attempt that passes through it
// and records every attempt's verdict and duration (on b's clock) with b. Place
// it inside the retry stage, so that each attempt is sampled and a trip during
// one attempt refuses the next. Guard panics if b is nil or was not built by
// [New].
func Guard[T any](b *Breaker) *Policy[T] {
	if b == nil {
		panic("breaker: Guard: breaker is nil (did you ignore the error from breaker.New?)")
	}
	if !b.built() {
		panic(notBuilt)
	}
	return &Policy[T]{b: b}
}

// GuardUntimed is Guard for attempts whose duration says nothing of how fast
// the dependency answers, such as the opening of a gRPC stream, which is the
// client's own work: it records every attempt's verdict with b, and no
// duration. Such an attempt never counts as slow, and never joins the
// samples of b's normal latency, so that attempts of the same dependency
// that are answers keep the normal theirs.
func GuardUntimed[T any](b *Breaker) *Policy[T] {
	p := Guard[T](b)
	p.untimed = true
	return p
}

// untimed is the duration finish records for an attempt of GuardUntimed.
const untimed time.Duration = -1

// Stage says what stage b makes when it guards a pipeline (see [Guard]), so
// that a breaker can stand for its stage where the result type is given once
// (standard.Compose).
func (b *Breaker) Stage() pipeline.StageInfo {
	return pipeline.StageInfo{Kind: kind.Breaker, Name: b.name}
}

// Stage says that p is a breaker stage, named after its breaker.
func (p *Policy[T]) Stage() pipeline.StageInfo {
	return pipeline.StageInfo{Kind: kind.Breaker, Name: p.b.name}
}

// Execute runs one attempt through the breaker. A refused attempt does not run:
// Execute returns a *pipeline.StopError with Reason DependencyUnavailable and a
// self-imposed Throttled verdict carrying the same retry-after hint, to the
// millisecond, and emits pipeline.Stopped. The refusals of one millisecond
// share one StopError, so that refusing allocates nothing: treat it as
// read-only. An admitted attempt's verdict is recorded when it returns; if
// it panics, it is recorded as a failure (freeing a probe slot) and the panic
// continues. Each attempt is recorded exactly once: if Config.OnEvent panics
// on an event its outcome raised, the outcome stands and the panic continues.
// A breaker in shadow mode refuses nothing (see [Config.Shadow]): every attempt
// runs, and only the breaker's events tell the would-be refusals.
func (p *Policy[T]) Execute(ctx context.Context, next pipeline.Next[T]) pipeline.Result[T] {
	var now instant
	if next.SharesClock(p.b.clock) { // admitted at the reading the call entered with, handed on
		r := next.Entered()
		now, next = p.b.from(r), next.At(r)
	} else {
		now = p.b.now()
	}
	t, retryAfter, ok := p.b.admit(now, ctx)
	if !ok {
		return next.Refuse(ctx, p.b.sharedRefusal(retryAfter))
	}
	defer p.b.doneIfUnwinding(&t)
	r := next.Run(ctx)
	now = p.b.now()
	d := now.Sub(t.start)
	if p.untimed {
		d = untimed
	}
	p.b.finish(now, &t, r.Verdict, d) // zeroes t's id before the hook runs
	return r
}

// doneIfUnwinding records the attempt *t as a failure if it has not been
// recorded: the attempt panicked or called runtime.Goexit. A hook that panics
// after the attempt's own outcome was recorded finds t's id zeroed by finish,
// so the ticket is never recorded twice.
func (b *Breaker) doneIfUnwinding(t *Ticket) {
	if t.id != 0 {
		b.Done(*t, outcome.Verdict{Kind: outcome.Transient})
	}
}

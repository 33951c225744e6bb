package hedge

import (
	"cmp"
	"context"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/budget"
	"github.com/resilience-go/pipeline/internal/callctx"
	"github.com/resilience-go/pipeline/internal/hedgerule"
	"github.com/resilience-go/pipeline/internal/kind"
	"github.com/resilience-go/pipeline/latency"
	"github.com/resilience-go/pipeline/outcome"
)

// Policy is the hedge stage. Build one with [New]; it is immutable and safe for
// concurrent use.
type Policy[T any] struct {
	name        string
	est         *latency.Estimator
	rule        *hedgerule.Rule // when to hedge, and whether a hedge may go
	maxAttempts int
	budget      *budget.Budget
	repeatable  bool
	sched       *callctx.Schedule // sends the calls' hedges when they are due, on Config.Clock
	clock       clockwork.Clock   // Config.Clock, the schedule's
	calls       sync.Pool         // of *call[T]
}

// New returns a hedge stage configured by cfg, or an error naming every setting
// that cannot work. The values of the copies that lose a race are released
// through the pipeline's [pipeline.Options].Release hook, on the caller's
// goroutine, before Execute returns.
func New[T any](cfg Config) (*Policy[T], error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	p := &Policy[T]{
		name:        cfg.Name,
		est:         cfg.Estimator,
		maxAttempts: cmp.Or(cfg.MaxAttempts, hedgerule.DefaultMaxAttempts),
		budget:      cfg.Budget,
		repeatable:  cfg.Repeatable,
		sched:       callctx.NewSchedule(cfg.Clock),
		clock:       cfg.Clock,
	}
	if p.est == nil {
		est, err := latency.New(latency.Config{Clock: cfg.Clock})
		if err != nil {
			return nil, err
		}
		p.est = est
	}
	p.rule = hedgerule.New(hedgerule.Settings{Estimator: p.est, Quantile: cfg.Quantile, MinDelay: cfg.MinDelay,
		MinSamples: cfg.MinSamples, MaxAttempts: cfg.MaxAttempts, MaxExtra: cfg.MaxExtra, Breaker: cfg.Breaker, Budget: cfg.Budget})
	p.calls.New = func() any { return newCall(p) }
	return p, nil
}

// Stage says that p is a hedge stage, and its name.
func (p *Policy[T]) Stage() pipeline.StageInfo {
	return pipeline.StageInfo{Kind: kind.Hedge, Name: p.name}
}

// Estimator returns the estimator the stage feeds and reads.
func (p *Policy[T]) Estimator() *latency.Estimator { return p.est }

// Execute runs one attempt through the stage. A call that may not be hedged runs
// as it would without the stage, except that it is measured: the duration of
// every successful attempt feeds the estimator. A call that may be hedged (see
// the package documentation) runs its first attempt on the caller's goroutine
// and, if no result has come back after the hedge delay, sends a hedge from a
// timer's goroutine, and so on up to Config.MaxAttempts in flight. The first
// acceptable result (OK, or a Permanent one that no copy could improve on) wins;
// the others are cancelled, waited for, and released. If none is acceptable,
// Execute returns the last one to finish.
func (p *Policy[T]) Execute(ctx context.Context, next pipeline.Next[T]) pipeline.Result[T] {
	at := next.Entered()
	start := p.from(next, at)
	if p.repeatable || IsRepeatable(ctx) {
		if delay, ok := p.rule.Delay(start); ok {
			return p.hedged(ctx, next, at, start, delay)
		}
	}
	next = next.At(at)
	if next.Inner().Kind != kind.Timeout {
		r := next.Run(ctx)
		if r.Verdict.Kind == outcome.OK {
			end := p.est.Now()
			p.est.Record(end, end-start)
		}
		return r
	}
	return p.measured(ctx, next, start)
}

// measured runs an attempt that is not hedged through the timeout inside the
// stage, with a context lent to it as a copy's is (see copyContext), which
// costs the allocation the timeout would have made for a context of its own,
// and keeps the reading that ended the attempt: a successful attempt is
// recorded with it, without reading the clock again.
func (p *Policy[T]) measured(ctx context.Context, next pipeline.Next[T], start time.Duration) pipeline.Result[T] {
	cp := callctx.WithCancel(ctx, nil, nil)
	cp.Lend()
	held := false
	defer func() {
		if !held { // the attempt panicked
			cp.Cancel()
		}
	}()
	r := next.Run(cp)
	held = true
	if r.Verdict.Kind == outcome.OK {
		end := p.returned(next, cp)
		p.est.Record(end, end-start)
	}
	if !next.Holds() {
		cp.Cancel()
		return r
	}
	return next.Hold(r, cp.Cancel)
}

// from is the estimator's time at the reading at of the pipeline's clock
// (pipeline.Next.Entered), if that is the estimator's clock, or else now.
func (p *Policy[T]) from(next pipeline.Next[T], at time.Duration) time.Duration {
	if next.SharesClock(p.est.Clock()) {
		return p.est.From(at)
	}
	return p.est.Now()
}

// returned is the estimator's time as the copy run with cp returned: the
// reading the attempt kept on cp (callctx.Ctx.Returned), if it kept one and
// the pipeline's clock is the estimator's, or else now.
func (p *Policy[T]) returned(next pipeline.Next[T], cp *callctx.Ctx) time.Duration {
	if r, ok := cp.ReturnedAt(); ok && next.SharesClock(p.est.Clock()) {
		return p.est.From(r)
	}
	return p.est.Now()
}

package hedge

import (
	"cmp"
	"context"
	"sync"
	"time"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/budget"
	"github.com/resilience-go/pipeline/internal/callctx"
	"github.com/resilience-go/pipeline/latency"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/breaker"
)

// Policy is the hedge stage. Build one with [New]; it is immutable and safe for
// concurrent use.
type Policy[T any] struct {
	name        string
	est         *latency.Estimator
	quantile    float64
	minDelay    time.Duration
	minSamples  int
	maxAttempts int
	breaker     *breaker.Breaker
	budget      *budget.Budget
	repeatable  bool
	sched       *callctx.Schedule // sends the calls' hedges when they are due, on Config.Clock
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
		quantile:    cmp.Or(cfg.Quantile, DefaultQuantile),
		minDelay:    cmp.Or(cfg.MinDelay, DefaultMinDelay),
		minSamples:  cmp.Or(cfg.MinSamples, DefaultMinSamples),
		maxAttempts: cmp.Or(cfg.MaxAttempts, DefaultMaxAttempts),
		breaker:     cfg.Breaker,
		budget:      cfg.Budget,
		repeatable:  cfg.Repeatable,
		sched:       callctx.NewSchedule(cfg.Clock),
	}
	if p.est == nil {
		est, err := latency.New(latency.Config{Clock: cfg.Clock})
		if err != nil {
			return nil, err
		}
		p.est = est
	}
	p.calls.New = func() any { return newCall(p) }
	return p, nil
}

// Stage says that p is a hedge stage, and its name.
func (p *Policy[T]) Stage() pipeline.StageInfo {
	return pipeline.StageInfo{Kind: "hedge", Name: p.name}
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
	start := p.est.Now()
	if p.repeatable || IsRepeatable(ctx) {
		if delay, ok := p.Delay(start); ok {
			return p.hedged(ctx, next, start, delay)
		}
	}
	r := next.Run(ctx)
	if r.Verdict.Kind == outcome.OK {
		end := p.est.Now()
		p.est.Record(end, end-start)
	}
	return r
}

// Delay is the stage's decision when an attempt of a repeatable call starts at
// now (a reading of the estimator's clock): whether it is armed and after what
// delay its hedge is due. It is armed when the estimator holds MinSamples
// samples and the breaker, if any, is under [MaxPressure] or in shadow mode
// (see [breaker.Breaker.Shadow]); the delay is the estimator's Quantile, never
// below MinDelay. Execute decides with it; it is exported so that a simulation
// can run the stage's own decisions.
func (p *Policy[T]) Delay(now time.Duration) (time.Duration, bool) {
	d, n := p.est.Quantile(now, p.quantile)
	if n < p.minSamples || (p.breaker != nil && !p.breaker.Shadow() && p.breaker.Pressure() >= MaxPressure) {
		return 0, false
	}
	return max(d, p.minDelay), true
}

// Permit is the stage's decision when a hedge is due: it asks the breaker and
// then the budget, returns "" and takes one budget token if the hedge may be
// sent, or returns why not ("breaker" or "budget"); a refused hedge is not
// charged. Like Delay, it is exported for simulations.
func (p *Policy[T]) Permit() string {
	if p.breaker != nil && !p.breaker.Shadow() && p.breaker.Pressure() >= MaxPressure {
		return "breaker"
	}
	if _, ok := p.budget.Withdraw(); !ok {
		return "budget"
	}
	return ""
}

// Acceptable reports whether a copy's verdict ends the race: a success, or a
// Permanent failure that a copy of the same request would only repeat.
func Acceptable(v outcome.Verdict) bool {
	return v.Kind == outcome.OK || (v.Kind == outcome.Permanent && !v.Canceled && !v.SelfImposed)
}

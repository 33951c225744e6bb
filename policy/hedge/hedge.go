package hedge

import (
	"cmp"
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/budget"
	"github.com/resilience-go/pipeline/criticality"
	"github.com/resilience-go/pipeline/internal/callctx"
	"github.com/resilience-go/pipeline/internal/kind"
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
	clock       clockwork.Clock   // Config.Clock, the schedule's
	calls       sync.Pool         // of *call[T]
	// earned is the hedges the armed attempts have earned and no hedge has
	// spent, in millionths; see saved.
	earned      atomic.Int64
	share, most int64 // MaxExtra, and MaxAttempts-1, in millionths
}

// micro is the unit of Policy.earned: a millionth of a hedge.
const micro = 1_000_000

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
		clock:       cfg.Clock,
	}
	if p.est == nil {
		est, err := latency.New(latency.Config{Clock: cfg.Clock})
		if err != nil {
			return nil, err
		}
		p.est = est
	}
	p.share = int64(cfg.extra() * micro)
	p.most = int64(p.maxAttempts-1) * micro
	p.earned.Store(p.most) // a new stage may hedge one attempt at once
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
		if delay, ok := p.Delay(start); ok {
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

// Delay is the stage's decision when an attempt of a repeatable call starts at
// now (a reading of the estimator's clock): whether it is armed and after what
// delay its hedge is due. It is armed when the estimator holds MinSamples
// samples and the breaker, if any, is under [MaxPressure] or in shadow mode
// (see [breaker.Breaker.Shadow]); the delay is the estimator's Quantile, never
// below MinDelay. An armed attempt earns its share of a hedge (see
// Config.MaxExtra). Execute decides with it; it is exported so that a
// simulation can run the stage's own decisions.
func (p *Policy[T]) Delay(now time.Duration) (time.Duration, bool) {
	d, n := p.est.Quantile(now, p.quantile)
	if n < p.minSamples || (p.breaker != nil && !p.breaker.Shadow() && p.breaker.Pressure() >= MaxPressure) {
		return 0, false
	}
	p.earn(p.share, p.saved(n))
	return max(d, p.minDelay), true
}

// saved is the most hedges, in millionths, that may be saved up when the
// estimator holds n samples: what a second of attempts earns at the rate they
// reached the estimator, and never less than one attempt's hedges.
func (p *Policy[T]) saved(n int) int64 {
	perSecond := float64(n) * float64(time.Second) / float64(p.est.Window())
	return max(p.most, int64(perSecond*float64(p.share)))
}

// earn credits n millionths of a hedge, up to most.
func (p *Policy[T]) earn(n, most int64) {
	for {
		e := p.earned.Load()
		if next := max(min(e+n, most), e); next == e || p.earned.CompareAndSwap(e, next) {
			return
		}
	}
}

// spend takes one hedge from what was earned, and reports false if less
// than one is there.
func (p *Policy[T]) spend() bool {
	for {
		e := p.earned.Load()
		if e < micro {
			return false
		}
		if p.earned.CompareAndSwap(e, e-micro) {
			return true
		}
	}
}

// Permit is the stage's decision when a hedge of level l is due: it asks the breaker,
// then what the armed attempts have earned (Config.MaxExtra), then the budget,
// returns "" and spends one hedge and one budget token if the hedge may be
// sent, or returns why not ("breaker", "extra" or "budget"); a refused hedge
// is not charged. Like Delay, it is exported for simulations.
func (p *Policy[T]) Permit(l criticality.Level) string {
	if p.breaker != nil && !p.breaker.Shadow() && p.breaker.Pressure() >= MaxPressure {
		return "breaker"
	}
	if !p.spend() {
		return "extra"
	}
	if _, ok := p.budget.Withdraw(l); !ok {
		p.earn(micro, p.most) // not sent: not spent (at most one attempt's worth, so the bound holds)
		return "budget"
	}
	return ""
}

// Acceptable reports whether a copy's verdict ends the race: a success, or a
// Permanent failure that a copy of the same request would only repeat.
func Acceptable(v outcome.Verdict) bool {
	return v.Kind == outcome.OK || (v.Kind == outcome.Permanent && !v.Canceled && !v.SelfImposed)
}

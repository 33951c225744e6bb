package adaptive

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/criticality"
	"github.com/resilience-go/pipeline/internal/histogram"
	"github.com/resilience-go/pipeline/internal/kind"
	"github.com/resilience-go/pipeline/latency"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/bulkhead"
)

// refusal is the reason of the stage's stop errors: one of our own limits
// refused the call, which says nothing of the dependency's health.
const refusal = pipeline.ConcurrencyLimited

// The bounds of a cut: a limit is never cut by less than a fifth, so that a
// cut that does not shorten the latency stands out from one that does, nor by
// more than half, so that one bad interval cannot empty the dependency.
const (
	deepestCut  = 0.5
	shallowCut  = 0.8
	fruitless   = 0.9 // a cut is fruitless if the next latency is above this share of the one that made it
	throttleCut = shallowCut
)

// Limiter is a concurrency limit that finds itself: a [bulkhead.Bulkhead]
// whose limit is revised every Config.Interval from the latency it measures.
// Build one with [New] per dependency and share it: it is not generic, so
// pipelines of different result types can share one, and [Guard] makes it a
// stage. Code outside a pipeline (the simulation) uses [Limiter.Acquire] or
// [Limiter.TryAcquire], then [Limiter.Done].
//
// A Limiter is safe for concurrent use. One mutex guards the rule's state; the
// slots have the bulkhead's own, and the estimator its own. The zero Limiter is
// not usable.
type Limiter struct {
	// Immutable after New.
	name         string
	slots        *bulkhead.Bulkhead
	est          *latency.Estimator
	fedElsewhere bool
	minLimit     float64
	maxLimit     float64
	quantile     float64
	tolerance    float64
	interval     time.Duration
	minSamples   int
	tenants      bool // Config.TenantShare bounds tenants: tickets name theirs
	kept         bool // Config.Guarantees keeps slots for levels: tickets name theirs

	// peak is the most calls inside at once since the last revision: one word,
	// raised with compare-and-swap on every admission.
	peak atomic.Int64
	// hint is the retry-after hint of a refusal: the median latency read at
	// the last revision, the time a slot is typically held.
	hint atomic.Int64
	// refused is the latest refusal made, shared by the refusals with the same
	// hint, so that refusing allocates nothing under load.
	refused atomic.Pointer[pipeline.StopError]

	// mu guards the fields below it.
	mu     sync.Mutex
	limit  float64           // the limit; the slots hold its integer part
	recent *histogram.Window // answers of the current interval: one slice, an interval wide
	seen   time.Duration     // the latest time given to recent; -1 before any
	next   time.Duration     // the end of the current interval: reaching it revises the limit
	// throttled counts the calls of the interval the dependency throttled.
	throttled int
	// cut says the last revision cut the limit for a queue, when the recent
	// quantile was cutAt.
	cut   bool
	cutAt time.Duration
	// floor is a baseline the rule accepted because a cut did not shorten the
	// latency: the dependency is slower on its own. 0 for none.
	floor time.Duration
	last  Revision // the latest revision, for Snapshot
}

// New returns a limiter configured by cfg, at Config.InitialLimit, or an error
// naming every impossible setting in cfg.
func New(cfg Config) (*Limiter, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	est := cfg.Estimator
	if est == nil {
		var err error
		if est, err = latency.New(latency.Config{Name: cfg.Name, Window: defaultWindow, Clock: cfg.Clock}); err != nil {
			return nil, err // unreachable: the settings are the package's own
		}
	}
	slots, err := bulkhead.New(bulkhead.Config{
		Name: cfg.Name, MaxConcurrent: cfg.InitialLimit, MaxQueue: cfg.MaxQueue, MaxWait: cfg.MaxWait,
		Shares: cfg.Shares, Guarantees: cfg.Guarantees, TenantShare: cfg.TenantShare, Clock: cfg.Clock,
	})
	if err != nil {
		return nil, err // unreachable: validated above
	}
	recent, err := histogram.New(cfg.Interval, 1)
	if err != nil {
		return nil, err // unreachable: validated above
	}
	l := &Limiter{
		name:         cfg.Name,
		slots:        slots,
		est:          est,
		fedElsewhere: cfg.FedElsewhere,
		minLimit:     float64(cfg.MinLimit),
		maxLimit:     float64(cfg.MaxLimit),
		quantile:     cfg.Quantile,
		tolerance:    cfg.Tolerance,
		interval:     cfg.Interval,
		minSamples:   cfg.MinSamples,
		tenants:      cfg.TenantShare > 0 && cfg.TenantShare < 1,
		kept:         cfg.Guarantees != (criticality.Guarantees{}),
		limit:        float64(cfg.InitialLimit),
		recent:       recent,
		seen:         -1,
	}
	l.next = l.boundary(est.Now())
	return l, nil
}

// Stage says what stage l makes (see [Guard]), so that a limiter can stand for
// its stage where the result type is given once.
func (l *Limiter) Stage() pipeline.StageInfo {
	return pipeline.StageInfo{Kind: kind.Adaptive, Name: l.name}
}

// Name returns the limiter's name (Config.Name).
func (l *Limiter) Name() string { return l.name }

// Estimator returns the estimator the limiter reads its baseline from.
func (l *Limiter) Estimator() *latency.Estimator { return l.est }

// Limit returns how many calls may be inside at once now.
func (l *Limiter) Limit() int { return l.slots.Limit() }

// InFlight returns how many calls are inside now.
func (l *Limiter) InFlight() int { return l.slots.InFlight() }

// Queued returns how many calls wait for a slot now.
func (l *Limiter) Queued() int { return l.slots.Queued() }

// Ticket is a slot a call holds: give it back with [Limiter.Done], once. It
// names the call's tenant when the limiter bounds tenants
// (Config.TenantShare), so that Done gives the slot back to the tenant that
// took it. The zero Ticket (what a refused TryAcquire or Acquire returns)
// holds no slot; giving it back does nothing.
type Ticket struct {
	start  time.Duration     // on the estimator's clock
	held   bool              // a slot was taken
	tenant string            // the tenant charged for the slot; "" for none
	level  criticality.Level // the level charged for the slot; 0 for none
}

// TryAcquire takes a slot for a call of ctx's level (criticality.From) if
// one is free to that level (see Config.Shares), its tenant holds fewer than
// its bound (see Config.TenantShare), and no call of that level or above is
// queued, as a bulkhead's TryAcquire does. It never waits.
func (l *Limiter) TryAcquire(ctx context.Context) (Ticket, bool) {
	n, ok := l.slots.TryAcquire(ctx)
	if !ok {
		return Ticket{}, false
	}
	l.raisePeak(n)
	return l.ticket(ctx, l.est.Now()), true
}

// ticket is the ticket of a slot taken at start for a call of ctx: it names
// the call's tenant if the limiter bounds tenants, and its level if it
// keeps slots for levels, so that Done gives the slot back to them.
func (l *Limiter) ticket(ctx context.Context, start time.Duration) Ticket {
	t := Ticket{start: start, held: true}
	if l.tenants {
		t.tenant = criticality.Tenant(ctx)
	}
	if l.kept {
		t.level = criticality.From(ctx)
	}
	return t
}

// Acquire takes a slot for a call of ctx's level, waiting in the queue for
// one if none is free to that level and the queue has room (or holds a call
// of a lower level, whose place it takes, as a bulkhead's does), for at most Config.MaxWait and never after ctx
// ends. It returns a *pipeline.StopError of Stage "adaptive" if the limiter
// refused, or pipeline.Interrupted's if ctx ended first.
func (l *Limiter) Acquire(ctx context.Context) (Ticket, error) {
	t, _, err := l.acquire(ctx)
	return t, err
}

// acquire is Acquire, which also says how long the call queued (-1 for a call
// that did not).
func (l *Limiter) acquire(ctx context.Context) (Ticket, time.Duration, error) {
	if t, ok := l.TryAcquire(ctx); ok {
		return t, -1, nil
	}
	start := l.est.Now()
	err := l.slots.Acquire(ctx)
	if err != nil {
		if stop, ok := err.(*pipeline.StopError); ok && (stop.Reason == pipeline.Canceled || stop.Reason == pipeline.Deadline) {
			return Ticket{}, -1, pipeline.Interrupted(ctx, l.Stage())
		}
		return Ticket{}, -1, l.refusal()
	}
	l.raisePeak(l.slots.InFlight())
	now := l.est.Now()
	return l.ticket(ctx, now), now - start, nil
}

// raisePeak raises peak to n.
func (l *Limiter) raisePeak(n int) {
	for {
		p := l.peak.Load()
		if int64(n) <= p || l.peak.CompareAndSwap(p, int64(n)) {
			return
		}
	}
}

// Done gives back the slot of t, taken by a call that ended with verdict v,
// and learns from the call. Every answer (not the caller's cancellation, not a
// refusal of our own) is a sample of the interval's latency, failures
// included: a call cut by a timeout after waiting in a queue says as much
// about the queue as a slow success. Only successes are recorded into the
// estimator, as the hedge stage records them. A Throttled answer is also a
// sign of overload. Reaching the end of an interval revises the limit. The
// slot goes back to the tenant and the level t names (see Config.TenantShare
// and Config.Guarantees), which costs a small allocation for a ticket that
// names one; the stage gives slots back with the call's own context, and
// allocates nothing.
func (l *Limiter) Done(t Ticket, v outcome.Verdict) {
	// The slots charge the tenant and the level of the context a slot is
	// given back with.
	ctx := context.Background()
	if t.tenant != "" {
		ctx = criticality.WithTenant(ctx, t.tenant)
	}
	if t.level != 0 {
		ctx = criticality.With(ctx, t.level)
	}
	l.done(ctx, t, v, true)
}

// done is Done; release says whether to give the slot back now, with ctx,
// the call's context or one of its tenant (a stage that keeps the call's
// value alive gives it back when the value is released). It returns the
// revision the call made, if it made one that moved the limit.
func (l *Limiter) done(ctx context.Context, t Ticket, v outcome.Verdict, release bool) (Revision, bool) {
	if !t.held { // a refusal's ticket, given back by mistake: no slot, no latency
		return Revision{}, false
	}
	now := l.est.Now()
	if release {
		l.slots.Release(ctx)
	}
	answered := !v.SelfImposed && !v.Canceled // the dependency answered, or our timeout ended the wait
	if answered && v.Kind == outcome.OK && !l.fedElsewhere {
		l.est.Record(now, now-t.start)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	var r Revision
	moved := false
	if now >= l.next {
		r, moved = l.revise(now)
	}
	if answered {
		l.recent.Add(now, now-t.start)
		l.seen = now
		if v.Kind == outcome.Throttled {
			l.throttled++
		}
	}
	return r, moved
}

// boundary returns the end of the interval that holds now: intervals are
// aligned on multiples of Interval, as the recent window's one slice is.
func (l *Limiter) boundary(now time.Duration) time.Duration {
	start := now / l.interval * l.interval
	if start > now {
		start -= l.interval
	}
	return start + l.interval
}

// refusal is the stop error of a refusal, with the latest hint; refusals with
// the same hint share one error. Treat it as read-only.
func (l *Limiter) refusal() *pipeline.StopError {
	hint := time.Duration(l.hint.Load())
	hint = (hint + time.Millisecond - 1).Truncate(time.Millisecond)
	if e := l.refused.Load(); e != nil && e.RetryAfter == hint {
		return e
	}
	e := &pipeline.StopError{Stage: kind.Adaptive, Name: l.name, Reason: refusal, RetryAfter: hint}
	l.refused.Store(e)
	return e
}

// setLimit moves the limit to x, within bounds, and the slots with it; mu
// must be held.
func (l *Limiter) setLimit(x float64) {
	l.limit = min(max(x, l.minLimit), l.maxLimit)
	l.slots.SetLimit(int(l.limit))
}

// sqrt is the headroom a revision adds to a limit in use: the square root of
// the limit, at least one call.
func sqrt(x float64) float64 { return max(1, math.Sqrt(x)) }

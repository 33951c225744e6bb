package ceiling

import (
	"cmp"
	"context"
	"math"
	"sync/atomic"
	"time"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/internal/kind"
	"github.com/resilience-go/pipeline/latency"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/timeout"
)

// Policy is a ceiling stage. Build one with [New]; it is safe for concurrent
// use, and its settings are immutable.
type Policy[T any] struct {
	name         string
	est          *latency.Estimator
	multiple     float64
	quantile     float64
	floor, cap   time.Duration
	minSamples   int
	fedElsewhere bool
	// cause is the cause of the last ceiling set, handed to every attempt
	// whose ceiling is the same: the estimator's quantile is memoized, so it
	// holds for many attempts in a row and an armed attempt allocates only
	// its context. It is one word, replaced whole.
	cause atomic.Pointer[timeout.Error]
}

// New returns a ceiling stage configured by cfg, or an error naming every
// setting that cannot work.
func New[T any](cfg Config) (*Policy[T], error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	floor, ceil := cfg.bounds()
	p := &Policy[T]{
		name:         cfg.Name,
		est:          cfg.Estimator,
		multiple:     cmp.Or(cfg.Multiple, defaultMultiple),
		quantile:     cmp.Or(cfg.Quantile, defaultQuantile),
		floor:        floor,
		cap:          ceil,
		minSamples:   cmp.Or(cfg.MinSamples, defaultMinSamples),
		fedElsewhere: cfg.FedElsewhere,
	}
	if p.est == nil {
		est, err := latency.New(latency.Config{Clock: cfg.Clock})
		if err != nil {
			return nil, err
		}
		p.est = est
	}
	return p, nil
}

// Stage says that p is a ceiling stage, with its name. Its Timeout is left 0:
// the ceiling follows the measured latency, so no one figure describes it, and
// pipeline.Check, which compares timeouts' limits, would judge a composition
// on a number that is wrong the next moment. Cap bounds it.
func (p *Policy[T]) Stage() pipeline.StageInfo {
	return pipeline.StageInfo{Kind: kind.Ceiling, Name: p.name}
}

// Estimator returns the estimator the stage reads (and, unless
// Config.FedElsewhere, feeds).
func (p *Policy[T]) Estimator() *latency.Estimator { return p.est }

// Limit is the stage's decision for an attempt that starts at now, a reading
// of the estimator's clock ([latency.Estimator.Now]): whether it is armed, and
// the ceiling. It is armed once the estimator holds MinSamples samples; the
// ceiling is Multiple times the estimator's Quantile, never below Floor nor
// above Cap. Execute decides with it; it is exported so that a simulation can
// run the stage's own decisions.
func (p *Policy[T]) Limit(now time.Duration) (time.Duration, bool) {
	limit, _, ok := p.limit(now)
	return limit, ok
}

// limit is Limit, with the quantile the ceiling was derived from.
func (p *Policy[T]) limit(now time.Duration) (limit, measured time.Duration, armed bool) {
	measured, n := p.est.Quantile(now, p.quantile)
	if n < p.minSamples {
		return 0, measured, false
	}
	// In float64, clamped to the cap before converting, so that a huge
	// measure times the multiple cannot overflow a Duration.
	limit = time.Duration(math.Min(float64(measured)*p.multiple, float64(p.cap)))
	return max(limit, p.floor), measured, true
}

// Execute runs the stages inside. Unarmed (see [Policy.Limit]), it passes the
// attempt through. Armed, it runs them with a context that expires at the
// ceiling, with a [*timeout.Error] as its cause (its Duration the ceiling,
// its Measured and Quantile what the ceiling was derived from), derived with
// context.WithTimeoutCause; an attempt that fails once the ceiling has passed
// becomes a *pipeline.StopError with Reason Deadline, Cause the
// *timeout.Error and Err the attempt's error, its value and verdict kept
// (Transient, as for any attempt our own deadline cut), and the stage emits
// [timeout.TimedOut] (with Measured set) and pipeline.Stopped. It returns the inner result as it is if the attempt
// succeeded (even late), an inner stage refused it, the caller's context is
// done, or an inner stage already reported this deadline. The context lives on
// with the value Execute returns until that value is released (see
// [pipeline.Next.Hold]), and ends at the ceiling in any case.
//
// Either way the stage records into the estimator, on its clock, the duration
// of a successful attempt (unless Config.FedElsewhere), and the time a cut
// attempt ran: a lower bound of its latency, so that when the dependency
// slows down as a whole, the ceiling rises with it rather than cutting every
// attempt until the window forgets the faster past.
func (p *Policy[T]) Execute(ctx context.Context, next pipeline.Next[T]) pipeline.Result[T] {
	start := p.est.Now()
	limit, measured, armed := p.limit(start)
	if !armed {
		r := next.Run(ctx)
		if r.Verdict.Kind == outcome.OK && !p.fedElsewhere {
			p.record(start)
		}
		return r
	}
	cause := p.causeFor(limit, measured)
	inner, cancel := context.WithTimeoutCause(ctx, limit, cause)
	held := false
	defer func() {
		if !held { // the work panicked
			cancel()
		}
	}()
	r := next.Run(inner)
	held = true
	switch {
	case r.Verdict.Kind == outcome.OK:
		if !p.fedElsewhere {
			p.record(start)
		}
	case !r.Verdict.SelfImposed && ctx.Err() == nil && context.Cause(inner) == error(cause):
		p.record(start) // cut: it ran at least this long
	}
	return next.Hold(p.judge(ctx, inner, cause, next, r), cancel)
}

// record adds the time since start to the estimator.
func (p *Policy[T]) record(start time.Duration) {
	end := p.est.Now()
	p.est.Record(end, end-start)
}

// causeFor returns the cause of a ceiling of limit derived from measured: the
// last one made if it is the same, otherwise a new one, kept for the next
// attempts. Two attempts that race to replace it each get a correct cause.
func (p *Policy[T]) causeFor(limit, measured time.Duration) *timeout.Error {
	if c := p.cause.Load(); c != nil && c.Duration == limit && c.Measured == measured {
		return c
	}
	c := &timeout.Error{Duration: limit, Measured: measured, Quantile: p.quantile}
	p.cause.Store(c)
	return c
}

// judge returns r as it is if it came in time, the caller's own cancellation
// ended it, or one of our own stages refused it; otherwise it returns r as a
// Deadline stop of this stage, unless an inner stage already reported the
// deadline.
func (p *Policy[T]) judge(ctx, inner context.Context, cause *timeout.Error, next pipeline.Next[T], r pipeline.Result[T]) pipeline.Result[T] {
	if r.Err == nil || r.Verdict.SelfImposed || ctx.Err() != nil || context.Cause(inner) != error(cause) {
		return r
	}
	if next.Observed() {
		next.Emit(inner, timeout.TimedOut{Timeout: cause.Duration, Measured: cause.Measured})
	}
	if stop, ok := r.Err.(*pipeline.StopError); ok && stop.Reason == pipeline.Deadline {
		return r
	}
	err := &pipeline.StopError{Stage: kind.Ceiling, Name: p.name, Reason: pipeline.Deadline, Cause: cause, Err: r.Err}
	r.Err = err
	if next.Observed() {
		next.Emit(ctx, pipeline.Stopped{Err: err})
	}
	return r
}

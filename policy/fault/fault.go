package fault

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/internal/kind"
	"github.com/resilience-go/pipeline/outcome"
)

// one is 1.0 as a threshold on a draw: draws are 53-bit, uniform on [0, one).
const one = 1 << 53

// Policy is a fault-injection stage. Build one with [New]; it is safe for
// concurrent use, and its settings are immutable.
type Policy[T any] struct {
	name    string
	enabled bool
	// The outcome faults' thresholds on one draw, cumulative in the order
	// Transient, Throttled, Permanent, Value: a draw below transient is a
	// Transient fault, below throttled a Throttled one, and so on. outcomes
	// is false when all four rates are 0: nothing is drawn for them.
	transient, throttled, permanent, value uint64
	outcomes                               bool
	latency                                uint64 // threshold on a second draw; 0: none drawn
	delay                                  time.Duration
	newValue                               func() T
	valueVerdict                           outcome.Verdict
	errs                                   [3]error // Transient, Throttled, Permanent, marked; built once

	mu  sync.Mutex  // guards src
	src rand.Source // nil: math/rand/v2's top-level generator, which needs no lock
}

// New returns a fault-injection stage configured by cfg, or an error naming
// every setting that cannot work.
func New[T any](cfg Config[T]) (*Policy[T], error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	p := &Policy[T]{
		name:         cfg.Name,
		enabled:      cfg.Enabled,
		latency:      threshold(cfg.Latency),
		delay:        cfg.Delay,
		newValue:     cfg.NewValue,
		valueVerdict: cfg.ValueVerdict,
		src:          cfg.Rand,
	}
	p.transient = threshold(cfg.Transient)
	p.throttled = threshold(cfg.Transient + cfg.Throttled)
	p.permanent = threshold(cfg.Transient + cfg.Throttled + cfg.Permanent)
	p.value = threshold(cfg.Transient + cfg.Throttled + cfg.Permanent + cfg.Value)
	p.outcomes = p.value > 0
	p.errs = [3]error{
		outcome.MarkTransient(&Error{Kind: Transient}),
		outcome.MarkThrottled(&Error{Kind: Throttled, RetryAfter: cfg.RetryAfter}, cfg.RetryAfter),
		outcome.MarkPermanent(&Error{Kind: Permanent}),
	}
	return p, nil
}

// threshold turns a rate in [0, 1] into a threshold on a 53-bit draw.
func threshold(rate float64) uint64 { return min(uint64(rate*one), one) }

// Stage says that p is a fault stage, with its name.
func (p *Policy[T]) Stage() pipeline.StageInfo {
	return pipeline.StageInfo{Kind: kind.Fault, Name: p.name}
}

// Execute runs one call through the stage. Disabled, it passes the call
// through. Enabled, it draws the call's outcome fault, if any rate of one is
// set, and then its latency, if Latency is set, and:
//
//  1. a Latency fault waits Config.Delay on the pipeline's clock; if the
//     call's context ends first, it returns at once with an [*Error] of Kind
//     Latency wrapping the context's error, classified as the pipeline
//     classifies any error (the caller's cancellation, or Transient when one
//     of our own timeouts ended it);
//  2. a Transient, Throttled or Permanent fault returns its [*Error], marked
//     with its kind (and RetryAfter), without running the work;
//  3. a Value fault returns NewValue's value with ValueVerdict, without
//     running the work;
//  4. otherwise the call goes on to the stages inside and the work.
//
// It emits [Injected] for each fault, before acting on it.
func (p *Policy[T]) Execute(ctx context.Context, next pipeline.Next[T]) pipeline.Result[T] {
	if !p.enabled {
		return next.Run(ctx)
	}
	var kind Kind
	if p.outcomes {
		switch d := p.draw(); {
		case d < p.transient:
			kind = Transient
		case d < p.throttled:
			kind = Throttled
		case d < p.permanent:
			kind = Permanent
		case d < p.value:
			kind = Value
		}
	}
	if p.latency > 0 && p.draw() < p.latency {
		if next.Observed() {
			next.Emit(ctx, Injected{Attempt: next.Attempt(), Kind: Latency, Delay: p.delay})
		}
		if !sleep(ctx, next.Clock(), p.delay) {
			var zero T
			err := &Error{Kind: Latency, Err: ctx.Err()}
			return pipeline.Result[T]{Err: err, Verdict: outcome.Classify(ctx, zero, error(err), nil)}
		}
	}
	if kind == 0 {
		return next.Run(ctx)
	}
	if next.Observed() {
		next.Emit(ctx, Injected{Attempt: next.Attempt(), Kind: kind})
	}
	var r pipeline.Result[T]
	if kind == Value {
		if p.newValue != nil {
			r.Value = p.newValue()
		}
		r.Verdict = p.valueVerdict
		return r
	}
	r.Err = p.errs[kind-Transient]
	r.Verdict = outcome.Classify(ctx, r.Value, r.Err, nil)
	return r
}

// draw returns a random number uniform on [0, one).
func (p *Policy[T]) draw() uint64 {
	if p.src == nil {
		return rand.Uint64() >> 11
	}
	p.mu.Lock()
	u := p.src.Uint64()
	p.mu.Unlock()
	return u >> 11
}

// sleep waits d on clock and reports true, or returns false as soon as ctx is
// done.
func sleep(ctx context.Context, clock clockwork.Clock, d time.Duration) bool {
	if ctx.Err() != nil {
		return false
	}
	t := clock.NewTimer(d)
	select {
	case <-t.Chan():
		return true
	case <-ctx.Done():
		t.Stop()
		return false
	}
}

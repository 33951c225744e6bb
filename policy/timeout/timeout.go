package timeout

import (
	"context"
	"sync"
	"time"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/outcome"
)

// Policy is a timeout stage. It is immutable and safe for concurrent use.
type Policy[T any] struct {
	timeout time.Duration
	grace   time.Duration
	cause   *Error
	calls   sync.Pool // of *call[T]
}

// New returns a timeout stage, or an error naming the first impossible value in
// cfg.
func New[T any](cfg Config) (*Policy[T], error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	p := &Policy[T]{timeout: cfg.Timeout, grace: cfg.Grace, cause: &Error{Duration: cfg.Timeout}}
	if p.grace == 0 {
		p.grace = DefaultGrace
	}
	p.calls.New = func() any { return newCall(p) }
	return p, nil
}

// Execute runs the rest of the pipeline with a context that expires after the
// stage's timeout, on a goroutine the stage owns; see the package documentation
// for what happens when the work ignores that context.
func (p *Policy[T]) Execute(ctx context.Context, next pipeline.Next[T]) pipeline.Result[T] {
	if ctx.Err() != nil {
		return p.stop(ctx, next, pipeline.Result[T]{}, false)
	}
	inner, cancel := context.WithTimeoutCause(ctx, p.timeout, p.cause)
	defer cancel()

	c := p.calls.Get().(*call[T])
	c.start(inner, next)
	select {
	case <-c.done:
		return p.finish(ctx, inner, next, c.collect())
	case <-inner.Done():
	}
	grace := time.NewTimer(p.grace)
	defer grace.Stop()
	select {
	case <-c.done:
		return p.finish(ctx, inner, next, c.collect())
	case <-grace.C:
	}
	if !c.abandon() {
		// The work finished in the instant between the grace period and now.
		<-c.done
		return p.finish(ctx, inner, next, c.collect())
	}
	return p.stop(ctx, next, pipeline.Result[T]{}, true)
}

// finish turns the inner result into the stage's result: unchanged unless our
// deadline passed and the work failed, which becomes a Deadline stop.
func (p *Policy[T]) finish(ctx, inner context.Context, next pipeline.Next[T], r pipeline.Result[T]) pipeline.Result[T] {
	if r.Err == nil || ctx.Err() != nil || context.Cause(inner) != p.cause {
		return r
	}
	if next.Observed() {
		next.Emit(TimedOut{Timeout: p.timeout})
	}
	if stop, ok := r.Err.(*pipeline.StopError); ok && stop.Reason == pipeline.Deadline {
		return r // an inner stage already reported this deadline
	}
	return p.stop(ctx, next, r, false)
}

// stop builds the stage's own Deadline or Canceled result, keeping the value and
// verdict of the work's result when it has one.
func (p *Policy[T]) stop(ctx context.Context, next pipeline.Next[T], r pipeline.Result[T], abandoned bool) pipeline.Result[T] {
	err := &pipeline.StopError{Stage: "timeout", Reason: pipeline.Deadline, Cause: p.cause, Err: r.Err}
	switch {
	case ctx.Err() != nil:
		err.Cause = context.Cause(ctx)
		if ctx.Err() == context.Canceled {
			err.Reason = pipeline.Canceled
		}
		r.Verdict = outcome.Verdict{Kind: outcome.Permanent, Canceled: true}
	case abandoned:
		r.Verdict = outcome.Verdict{Kind: outcome.Transient}
	}
	r.Err = err
	if next.Observed() {
		if abandoned && ctx.Err() == nil {
			next.Emit(TimedOut{Timeout: p.timeout, Abandoned: true})
		}
		next.Emit(pipeline.Stopped{Err: err})
	}
	return r
}

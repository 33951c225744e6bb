package timeout

import (
	"cmp"
	"context"
	"time"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/internal/callctx"
	"github.com/resilience-go/pipeline/internal/kind"
	"github.com/resilience-go/pipeline/outcome"
)

// Policy is a timeout stage. It is immutable and safe for concurrent use.
type Policy[T any] struct {
	name        string
	timeout     time.Duration
	grace       time.Duration // 0 unless Config.Abandon: the work is trusted
	cause       *Error
	expiry      *callctx.Schedule // expires the calls' contexts, with one timer for all
	untilReturn bool
}

// New returns a timeout stage, or an error naming the first impossible value in
// cfg.
func New[T any](cfg Config) (*Policy[T], error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	p := &Policy[T]{name: cfg.Name, timeout: cfg.Timeout, cause: &Error{Duration: cfg.Timeout}, untilReturn: cfg.UntilReturn}
	p.expiry = callctx.NewSchedule(nil)
	if cfg.Abandon {
		p.grace = cmp.Or(cfg.Grace, defaultGrace)
	}
	return p, nil
}

// Stage says that p is a timeout stage, with its name and timeout.
func (p *Policy[T]) Stage() pipeline.StageInfo {
	return pipeline.StageInfo{Kind: kind.Timeout, Name: p.name, Timeout: p.timeout}
}

// Execute runs the rest of the pipeline with a context that expires after the
// stage's timeout and, if the stage guards, guards the caller's work with the
// stage's grace (see [pipeline.Next.AbandonAfter]). The context lives
// on with the value Execute returns until that value is released (see
// [pipeline.Next.Hold]), and ends at the timeout in any case, unless the
// stage or the call asks for UntilReturn: then a value returned in time
// keeps its context without a deadline.
func (p *Policy[T]) Execute(ctx context.Context, next pipeline.Next[T]) pipeline.Result[T] {
	if ctx.Err() != nil {
		return p.stop(ctx, next, pipeline.Result[T]{})
	}
	inner, next := p.derive(ctx, next)
	if inner == ctx { // a hedge's copy, lent to us: the hedge ends it
		r := p.judge(inner.Parent(), inner, next, next.AbandonAfter(p.grace).Run(inner))
		p.returned(ctx, inner, next, r)
		return r
	}
	held := false
	defer func() {
		if !held { // the work panicked
			inner.Cancel()
		}
	}()
	r := next.AbandonAfter(p.grace).Run(inner)
	held = true
	r = p.judge(ctx, inner, next, r)
	if !next.Holds() { // end it here: passing inner.Cancel to Hold would allocate
		inner.Cancel()
		return r
	}
	p.returned(ctx, inner, next, r)
	return next.Hold(r, inner.Cancel)
}

// returned ends the deadline of inner, whose work returned r, if the stage
// or the call asked for UntilReturn and the pipeline holds r's value: the
// value's context then lives on without it until the value is released.
func (p *Policy[T]) returned(ctx context.Context, inner *callctx.Ctx, next pipeline.Next[T], r pipeline.Result[T]) {
	if next.Holds() && r.Err == nil && (p.untilReturn || untilReturn(ctx)) {
		inner.Disarm(p.expiry)
	}
}

// untilReturnKey marks a call's context (see UntilReturn).
type untilReturnKey struct{}

// UntilReturn returns a copy of ctx under which every timeout stage a call
// passes ends its deadline when the work returns a value in time, as
// Config.UntilReturn does for one stage: for a call whose value is read
// long after it returned (a download of unknown length, a stream), which
// the caller bounds by other means (its own context, a stall timeout).
func UntilReturn(ctx context.Context) context.Context {
	return context.WithValue(ctx, untilReturnKey{}, true)
}

// untilReturn reports whether ctx was marked by UntilReturn.
func untilReturn(ctx context.Context) bool {
	v, _ := ctx.Value(untilReturnKey{}).(bool)
	return v
}

// derive returns the context the stage passes inward, which expires after the
// stage's timeout with p.cause, and next handing inward the reading the
// deadline was set from. The stage's schedule expires it, with one runtime
// timer for all the stage's calls. A context a hedge lent (see
// callctx.Ctx.Lend) takes the deadline itself, and derive returns it: the
// hedge lends its copies' contexts to the stage inside it when that stage's
// kind is kind.Timeout, which promises this.
func (p *Policy[T]) derive(ctx context.Context, next pipeline.Next[T]) (*callctx.Ctx, pipeline.Next[T]) {
	var now time.Time
	if next.SharesClock(nil) { // a deadline is on real time, whatever the pipeline's clock
		r := next.Entered()
		now, next = p.expiry.At(r), next.At(r)
	} else {
		now, next = p.expiry.Now(), next.Onward()
	}
	return callctx.WithDeadline(ctx, p.expiry, now, now.Add(p.timeout), p.cause), next
}

// judge returns r as it is if it came in time, the caller's own cancellation
// ended it, or one of our own stages refused it (a refusal is what stopped the
// call, even if our deadline fell due as it came back); otherwise it returns r
// as a Deadline stop of this stage.
func (p *Policy[T]) judge(ctx context.Context, inner *callctx.Ctx, next pipeline.Next[T], r pipeline.Result[T]) pipeline.Result[T] {
	if r.Err == nil || r.Verdict.SelfImposed || ctx.Err() != nil || inner.Cause() != error(p.cause) {
		return r
	}
	if next.Observed() {
		next.Emit(inner, TimedOut{Timeout: p.timeout})
	}
	if stop, ok := r.Err.(*pipeline.StopError); ok && stop.Reason == pipeline.Deadline {
		return r // an inner stage already reported this deadline
	}
	return p.stop(ctx, next, r)
}

// stop returns r, keeping its value and verdict, with a Deadline stop error for
// our own deadline, or a Canceled or Deadline one for a caller whose context was
// already done on arrival.
func (p *Policy[T]) stop(ctx context.Context, next pipeline.Next[T], r pipeline.Result[T]) pipeline.Result[T] {
	err := &pipeline.StopError{Stage: kind.Timeout, Name: p.name, Reason: pipeline.Deadline, Cause: p.cause, Err: r.Err}
	if ctx.Err() != nil {
		err.Cause = context.Cause(ctx)
		if ctx.Err() == context.Canceled {
			err.Reason = pipeline.Canceled
		}
		r.Verdict = outcome.Verdict{Kind: outcome.Permanent, Canceled: true}
	}
	r.Err = err
	if next.Observed() {
		next.Emit(ctx, pipeline.Stopped{Err: err})
	}
	return r
}

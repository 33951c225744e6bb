package retry

import (
	"context"
	"errors"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/criticality"
	"github.com/resilience-go/pipeline/internal/kind"
	"github.com/resilience-go/pipeline/internal/retryrule"
	"github.com/resilience-go/pipeline/outcome"
)

// stage is the kind of stage retry gives its stop errors.
const stage = kind.Retry

// Policy is the retry stage: it runs the stages inside it again after a Transient
// or Throttled failure, waiting a backoff between attempts and paying for each
// retry from a budget. Build one with [New]; it is immutable and safe for
// concurrent use, and one Policy serves any number of pipelines and calls.
type Policy[T any] struct {
	name string
	rule retryrule.Rule // what follows each attempt, shared with the simulation
}

// New returns a retry stage configured by cfg, or an error naming the first
// setting that cannot work.
func New[T any](cfg Config) (*Policy[T], error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Policy[T]{name: cfg.Name, rule: rule(cfg)}, nil
}

// rule is cfg's rule, its defaults filled in.
func rule(cfg Config) retryrule.Rule {
	backoff, src := cfg.Backoff, cfg.Rand
	if backoff == nil {
		backoff = Exponential{}
	}
	if src == nil {
		src = globalSource{}
	}
	return retryrule.New(cfg.MaxAttempts, backoff, cfg.RefusalPause, cfg.Budget, src)
}

// Execute runs attempts of the stages inside it until one succeeds or the call
// must stop. Attempt n runs as next.WithAttempt(n).Run(ctx). After each attempt,
// by its verdict:
//
//   - OK: the budget gets a deposit and the result is returned as it is.
//   - A refusal by an inner stage (a self-imposed verdict, such as an open
//     breaker's): the call pauses for RefusalPause (at most until ctx's deadline,
//     less if ctx is done) and stops with the refusing stage's name, reason and
//     retry-after hint. A refusal is never charged to the budget: the token a
//     refused retry took is refunded.
//   - The caller's cancellation, or ctx done: stop at once with reason Canceled
//     or Deadline and Cause set to context.Cause(ctx). An attempt judged the
//     caller's doing while ctx is not done yet (a server's DeadlineExceeded
//     that beat the caller's deadline by a moment) stops with Deadline if ctx
//     has one, its Cause context.DeadlineExceeded.
//   - Permanent: stop with reason Permanent.
//   - Transient or Throttled with no attempts left: stop with AttemptsExhausted.
//   - Otherwise the backoff gives the delay. If the wait would reach ctx's
//     deadline, the call stops at once with reason Deadline instead of sleeping
//     (HintBeyondDeadline if the dependency's hint alone would reach it); if
//     the budget cannot pay, with BudgetExhausted and the budget's hint.
//     Otherwise the attempt's value is released (see
//     [pipeline.Options].Release), a [Scheduled] event is emitted and the
//     stage waits, on the pipeline's clock, returning at once (Canceled or
//     Deadline) if ctx is done.
//
// Every stop returns a *pipeline.StopError with the number of attempts that ran
// and the last of them's error (see [pipeline.Next.ErrOf]), and emits a
// [pipeline.Stopped] event. A stop on an attempt's verdict returns that
// attempt's value, so a last 503 response stays readable; a stop during a wait,
// or on a refusal of the retry that followed, returns none, since the value
// was released when the retry was decided. The result's Verdict is the last
// attempt's verdict (the refusal's, for a refusal).
func (p *Policy[T]) Execute(ctx context.Context, next pipeline.Next[T]) pipeline.Result[T] {
	var last pipeline.Result[T] // the last attempt that ran and was released, if any
	try := next.Onward()        // the first attempt runs at once: the reading handed in holds for it
	for n := 1; ; n++ {
		r := try.WithAttempt(n).Run(ctx)
		try = next // the others run after a wait, and read the clock themselves
		v := r.Verdict
		if v.SelfImposed {
			if n > 1 {
				p.rule.Budget.Refund() // the retry never reached the dependency
			}
			next.Discard(r)
			return p.refused(ctx, next, r, last, n-1)
		}
		switch {
		case v.Kind == outcome.OK:
			p.rule.Budget.Deposit()
			return r
		case v.Canceled || ctx.Err() != nil:
			return p.canceled(ctx, next, r, n)
		}
		// A context's deadline is read on real time (the bubble's, under
		// testing/synctest), whatever the pipeline's clock.
		deadline, bounded := ctx.Deadline()
		var left time.Duration
		if bounded {
			left = time.Until(deadline)
		}
		step := p.rule.After(n, v, left, bounded, criticality.From(ctx))
		if step.Reason != 0 {
			return p.stop(ctx, next, r, &pipeline.StopError{Stage: stage, Name: p.name, Reason: step.Reason, RetryAfter: step.RetryAfter, Attempts: n, Err: next.ErrOf(r)})
		}
		delay := step.Delay
		// r will be replaced: release its value now, so that what it holds
		// (a response's connection) is free during the wait; keep what the
		// stops below report of it.
		last = pipeline.Result[T]{Err: next.ErrOf(r), Verdict: v}
		next.Discard(r)
		if next.Observed() {
			p.scheduled(ctx, next, Scheduled{Attempt: n + 1, Delay: delay, Verdict: v, Err: r.Err})
		}
		if !sleep(ctx, next.Clock(), delay) {
			p.rule.Budget.Refund() // the retry it paid for will not run
			return p.canceled(ctx, next, last, n)
		}
	}
}

// scheduled reports e, a retry the budget has paid for; if the event hook
// panics, the retry will not run, so its token is refunded.
func (p *Policy[T]) scheduled(ctx context.Context, next pipeline.Next[T], e Scheduled) {
	returned := false
	defer func() {
		if !returned {
			p.rule.Budget.Refund()
		}
	}()
	next.Emit(ctx, e)
	returned = true
}

// stop returns r with e as its error, after reporting e.
func (p *Policy[T]) stop(ctx context.Context, next pipeline.Next[T], r pipeline.Result[T], e *pipeline.StopError) pipeline.Result[T] {
	if next.Observed() {
		next.Emit(ctx, pipeline.Stopped{Err: e})
	}
	r.Err = e
	return r
}

// Stage says that p is a retry stage, and its name.
func (p *Policy[T]) Stage() pipeline.StageInfo {
	return pipeline.StageInfo{Kind: stage, Name: p.name}
}

// canceled stops the call because ctx is done or the caller canceled the
// attempt. r is the last attempt, and attempts the number that ran.
func (p *Policy[T]) canceled(ctx context.Context, next pipeline.Next[T], r pipeline.Result[T], attempts int) pipeline.Result[T] {
	return p.stop(ctx, next, r, p.interrupted(ctx, attempts, next.ErrOf(r)))
}

// interrupted is the stop for a call whose ctx is done, or whose attempt was
// judged the caller's doing while ctx was not done yet. Only a dependency
// that answers for the caller's deadline does that: a gRPC server's
// DeadlineExceeded, sent as the deadline the call carried fell due there,
// arrives a moment before it falls due here. So a ctx with a deadline stops
// with reason Deadline (and context.DeadlineExceeded as the cause, the one
// known yet); without a deadline, with Canceled.
func (p *Policy[T]) interrupted(ctx context.Context, attempts int, err error) *pipeline.StopError {
	e := pipeline.Interrupted(ctx, p.Stage())
	if _, ok := ctx.Deadline(); ok && e.Cause == nil {
		e.Reason, e.Cause = pipeline.Deadline, context.DeadlineExceeded
	}
	e.Attempts, e.Err = attempts, err
	return e
}

// refused stops the call because an inner stage refused attempt attempts+1:
// refusal is that attempt's result, last the attempt that ran before it, its
// value already released (zero if none ran). The stop keeps the refusing stage's name and reason, and its hint
// less the pause (which is no longer than the hint), unless ctx was already done on arrival: then the caller's
// cancellation wins. A deadline or cancellation during the pause only ends the
// pause early (the pause is cut to end at the deadline): the refusal is what
// stopped the call, whichever timer fires first.
func (p *Policy[T]) refused(ctx context.Context, next pipeline.Next[T], refusal, last pipeline.Result[T], attempts int) pipeline.Result[T] {
	r := pipeline.Result[T]{Verdict: refusal.Verdict}
	if ctx.Err() != nil {
		return p.stop(ctx, next, r, p.interrupted(ctx, attempts, last.Err))
	}
	e := pipeline.StopError{Stage: stage, Name: p.name, Reason: pipeline.DependencyUnavailable, RetryAfter: refusal.Verdict.RetryAfter(), Attempts: attempts, Err: last.Err}
	inner, isStop := refusal.Err.(*pipeline.StopError) // as stages return it; else look deeper
	if !isStop {
		inner, isStop = errors.AsType[*pipeline.StopError](refusal.Err)
	}
	if isStop {
		e.Stage, e.Name, e.Reason, e.RetryAfter = inner.Stage, inner.Name, inner.Reason, inner.RetryAfter
	}
	deadline, bounded := ctx.Deadline()
	var left time.Duration
	if bounded {
		left = time.Until(deadline)
	}
	if pause := p.rule.RefusalPause(e.RetryAfter, left, bounded); pause > 0 {
		clock := next.Clock()
		start := clock.Now()
		sleep(ctx, clock, pause)
		if e.RetryAfter > 0 { // the hint as the caller receives it, to the ms as hints go
			e.RetryAfter = max(e.RetryAfter-clock.Since(start), 0).Round(time.Millisecond)
		}
	}
	if isStop && attempts == 0 && e.RetryAfter == inner.RetryAfter && inner.Attempts == 0 && inner.Err == nil && inner.Cause == nil {
		return p.stop(ctx, next, r, inner) // nothing to add: the refusal as it came, with no allocation
	}
	stop := e // escapes: declared here, so that the path above allocates nothing
	return p.stop(ctx, next, r, &stop)
}

// sleep waits d on clock and reports true, or returns false as soon as ctx is
// done (also when it is done once the wait is over).
func sleep(ctx context.Context, clock clockwork.Clock, d time.Duration) bool {
	if d > 0 {
		t := clock.NewTimer(d)
		select {
		case <-t.Chan():
		case <-ctx.Done():
			t.Stop()
			return false
		}
	}
	return ctx.Err() == nil
}

package simulation

import (
	"math/rand/v2"
	"time"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/budget"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/retry"
)

// loop is one process's retry rules. It decides, after each attempt, what the
// retry stage (policy/retry, Policy.Execute) would do next, in the same order and
// with the same real backoff and budget, so that a simulated call costs what a
// real one would. TestLoopMatchesRetryStage holds the two together.
type loop struct {
	maxAttempts int
	backoff     retry.Backoff
	pause       time.Duration
	budget      *budget.Budget // nil: unlimited
	rand        rand.Source
}

// newLoop returns the rules of r paid for by b, drawing jitter from src. A nil r
// means no retry stage: one attempt, whose refusal or failure ends the call at
// once and which involves no budget.
func newLoop(r *Retry, b *budget.Budget, src rand.Source) loop {
	if r == nil {
		return loop{maxAttempts: 1, backoff: retry.Exponential{}, rand: src}
	}
	l := loop{maxAttempts: r.MaxAttempts, backoff: r.Backoff, pause: r.RefusalPause, budget: b, rand: src}
	if l.maxAttempts == 0 {
		l.maxAttempts = retry.DefaultMaxAttempts
	}
	if l.backoff == nil {
		l.backoff = retry.Exponential{}
	}
	if l.pause == 0 {
		l.pause = retry.DefaultRefusalPause
	}
	return l
}

// step is what the retry loop does after an attempt.
type step struct {
	// served: the attempt succeeded and the call is over.
	served bool
	// reason is why the call stops; 0 means it goes on, or was served.
	reason pipeline.Reason
	// attempts is the number of attempts that ran when the call stops (a refused
	// attempt does not count), as in the stop error's Attempts.
	attempts int
	// wait is the backoff before the next attempt when the call goes on, and the
	// pause before a refused call returns when it stops on a refusal.
	wait time.Duration
}

// after applies the retry stage's rules to attempt n (1-based), which ended
// with verdict v at now. deadline is the call's deadline, the zero time for
// none; a call is done once now has reached it. A breaker's refusal is passed
// as its self-imposed verdict.
//
// The rules, first match wins (see retry.Policy.Execute):
//   - OK: deposit, served.
//   - self-imposed (refused by the breaker): refund the token of a refused
//     retry; stop with Deadline if the call is done, else DependencyUnavailable
//     after pausing (at most until the deadline, and at most the refusal's hint).
//   - canceled, or the call is done: stop with Deadline (Canceled if there is
//     no deadline to blame).
//   - not retryable: stop with Permanent.
//   - n attempts made: stop with AttemptsExhausted.
//   - the backoff would reach the deadline: stop with HintBeyondDeadline if the
//     dependency's hint alone would, else with Deadline.
//   - the budget refuses: stop with BudgetExhausted.
//   - otherwise wait the backoff and try again.
func (l *loop) after(n int, v outcome.Verdict, now, deadline time.Time) step {
	done := !deadline.IsZero() && !now.Before(deadline)
	switch {
	case v.Kind == outcome.OK:
		l.budget.Deposit()
		return step{served: true, attempts: n}
	case v.SelfImposed:
		if n > 1 {
			l.budget.Refund() // the retry never reached the dependency
		}
		if done {
			return step{reason: pipeline.Deadline, attempts: n - 1}
		}
		pause := l.pause
		if hint := v.RetryAfter(); hint > 0 {
			pause = min(pause, hint)
		}
		if !deadline.IsZero() {
			pause = min(pause, deadline.Sub(now))
		}
		return step{reason: pipeline.DependencyUnavailable, attempts: n - 1, wait: max(pause, 0)}
	case done:
		return step{reason: pipeline.Deadline, attempts: n}
	case v.Canceled:
		return step{reason: pipeline.Canceled, attempts: n}
	case !v.Retryable():
		return step{reason: pipeline.Permanent, attempts: n}
	case n >= l.maxAttempts:
		return step{reason: pipeline.AttemptsExhausted, attempts: n}
	}
	delay := max(l.backoff.Delay(n+1, v, l.rand), 0)
	if !deadline.IsZero() && !now.Add(delay).Before(deadline) {
		if hint := v.RetryAfter(); hint > 0 && !now.Add(hint).Before(deadline) {
			return step{reason: pipeline.HintBeyondDeadline, attempts: n}
		}
		return step{reason: pipeline.Deadline, attempts: n}
	}
	if _, ok := l.budget.Withdraw(); !ok {
		return step{reason: pipeline.BudgetExhausted, attempts: n}
	}
	return step{wait: delay}
}

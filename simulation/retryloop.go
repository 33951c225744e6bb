package simulation

import (
	"math/rand/v2"
	"time"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/budget"
	"github.com/resilience-go/pipeline/criticality"
	"github.com/resilience-go/pipeline/internal/retryrule"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/retry"
)

// loop is one process's retry rules: the retry stage's own (policy/retry,
// through internal/retryrule), played on the simulation's clock, so that a
// simulated call retries, waits and pays exactly as a real one would.
// TestLoopMatchesRetryStage holds what is around the rule (the refusals,
// the deadline) to what the stage does.
type loop struct {
	rule retryrule.Rule
}

// newLoop returns the rules of r paid for by b, drawing jitter from src, with
// the retry stage's defaults. A nil r means no retry stage: one attempt,
// whose refusal or failure ends the call at once and which involves no
// budget.
func newLoop(r *Retry, b *budget.Budget, src rand.Source) loop {
	if r == nil {
		return loop{rule: retryrule.Rule{MaxAttempts: 1, Backoff: retry.Exponential{}, Rand: src}}
	}
	var backoff retryrule.Backoff = retry.Exponential{}
	if r.Backoff != nil {
		backoff = r.Backoff
	}
	return loop{rule: retryrule.New(r.MaxAttempts, backoff, r.RefusalPause, b, src)}
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
// as its self-imposed verdict. What is decided here, as the stage decides it
// with its context: a success deposits; a refusal refunds the token of a
// refused retry and stops with DependencyUnavailable after the rule's pause
// (Deadline if the call is done); a done call stops with Deadline, a canceled
// attempt with Canceled; the rest is the rule's (retryrule.Rule.After).
func (l *loop) after(n int, v outcome.Verdict, now, deadline time.Time) step {
	bounded := !deadline.IsZero()
	left := deadline.Sub(now)
	done := bounded && left <= 0
	switch {
	case v.Kind == outcome.OK:
		l.rule.Budget.Deposit()
		return step{served: true, attempts: n}
	case v.SelfImposed:
		if n > 1 {
			l.rule.Budget.Refund() // the retry never reached the dependency
		}
		if done {
			return step{reason: pipeline.Deadline, attempts: n - 1}
		}
		return step{reason: pipeline.DependencyUnavailable, attempts: n - 1, wait: l.rule.RefusalPause(v.RetryAfter(), left, bounded)}
	case done:
		return step{reason: pipeline.Deadline, attempts: n}
	case v.Canceled:
		return step{reason: pipeline.Canceled, attempts: n}
	}
	st := l.rule.After(n, v, left, bounded, criticality.Default)
	if st.Reason == 0 {
		return step{wait: st.Delay}
	}
	return step{reason: st.Reason, attempts: n}
}

// Package retryrule holds the retry stage's decisions, written once:
// package retry acts on them with a context and the pipeline's clock, and
// the simulation plays them on its own clock, so that a simulated call
// retries exactly as a real one would.
package retryrule

import (
	"math/rand/v2"
	"time"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/budget"
	"github.com/resilience-go/pipeline/criticality"
	"github.com/resilience-go/pipeline/outcome"
)

// Backoff is retry.Backoff, which every retry.Backoff satisfies.
type Backoff interface {
	Delay(attempt int, v outcome.Verdict, src rand.Source) time.Duration
}

// Defaults of retry.Config's zero-valued fields.
const (
	// DefaultMaxAttempts is the number of attempts of a call, the first included.
	DefaultMaxAttempts = 3
	// DefaultRefusalPause is how long a call refused by an inner stage (an open
	// breaker) waits before the retry returns the refusal.
	DefaultRefusalPause = 100 * time.Millisecond
)

// Rule is the decisions of one retry stage.
type Rule struct {
	MaxAttempts int           // at least 1
	Backoff     Backoff       // not nil
	Pause       time.Duration // the refusal pause; 0 for none
	Budget      *budget.Budget
	Rand        rand.Source // not nil
}

// New returns the rule of a retry stage's settings: maxAttempts 0 means
// DefaultMaxAttempts, pause 0 means DefaultRefusalPause and a negative pause
// none.
// backoff and src must not be nil (the stage gives its defaults).
func New(maxAttempts int, backoff Backoff, pause time.Duration, b *budget.Budget, src rand.Source) Rule {
	if maxAttempts == 0 {
		maxAttempts = DefaultMaxAttempts
	}
	switch {
	case pause == 0:
		pause = DefaultRefusalPause
	case pause < 0:
		pause = 0
	}
	return Rule{MaxAttempts: maxAttempts, Backoff: backoff, Pause: pause, Budget: b, Rand: src}
}

// Step is what follows a failed attempt: the next attempt after Delay (a
// zero Reason), or a stop for Reason with the RetryAfter hint.
type Step struct {
	Reason     pipeline.Reason
	Delay      time.Duration
	RetryAfter time.Duration
}

// After decides what follows attempt n, which failed with v, neither
// refused by a stage inside nor the caller's doing: left is the time until
// the call's deadline (bounded false for none). In order: a failure no
// retry can fix stops (Permanent); so does the last attempt
// (AttemptsExhausted); a backoff that would reach the deadline stops at once
// (HintBeyondDeadline if the dependency's hint alone would reach it, else
// Deadline); a budget that cannot pay stops (BudgetExhausted, with its
// hint); otherwise the budget has paid, and the next attempt follows the
// backoff.
func (r *Rule) After(n int, v outcome.Verdict, left time.Duration, bounded bool, l criticality.Level) Step {
	switch {
	case !v.Retryable():
		return Step{Reason: pipeline.Permanent}
	case n >= r.MaxAttempts:
		return Step{Reason: pipeline.AttemptsExhausted}
	}
	delay := max(r.Backoff.Delay(n+1, v, r.Rand), 0)
	if bounded && delay >= left {
		if hint := v.RetryAfter(); hint > 0 && hint >= left {
			return Step{Reason: pipeline.HintBeyondDeadline, RetryAfter: hint}
		}
		return Step{Reason: pipeline.Deadline}
	}
	if wait, ok := r.Budget.Withdraw(l); !ok {
		return Step{Reason: pipeline.BudgetExhausted, RetryAfter: wait}
	}
	return Step{Delay: delay}
}

// RefusalPause is how long a call that a stage inside refused, with the
// hint hint, waits before it returns: the refusal pause, no longer than a
// hint that asks for less (a rate limit's next token), nor than left, the
// time until the call's deadline (bounded false for none).
func (r *Rule) RefusalPause(hint, left time.Duration, bounded bool) time.Duration {
	pause := r.Pause
	if pause > 0 && hint > 0 {
		pause = min(pause, hint)
	}
	if bounded {
		pause = min(pause, left)
	}
	return max(pause, 0)
}

package pipeline

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unsafe"

	"github.com/resilience-go/pipeline/outcome"
)

// Reason says why a stage refused a call or gave up on it. A Reason is an
// error: a [StopError] matches its reason with errors.Is, so
// errors.Is(err, pipeline.DependencyUnavailable) asks whether err, or an
// error it wraps, is a stop of that reason.
type Reason uint8

const (
	// DependencyUnavailable: a circuit breaker refused the attempt.
	DependencyUnavailable Reason = iota + 1
	// BudgetExhausted: the retry budget could not pay for another attempt.
	BudgetExhausted
	// AttemptsExhausted: every permitted attempt failed.
	AttemptsExhausted
	// Deadline: a deadline passed, ours or the caller's; Cause tells which.
	Deadline
	// Canceled: the caller canceled the call.
	Canceled
	// Permanent: the last attempt failed in a way no retry can fix.
	Permanent
	// HintBeyondDeadline: the dependency asked for a pause (its retry-after
	// hint) that outlasts the time the call has left, so the call stopped at
	// once rather than wait in vain. The hint is in [StopError.RetryAfter].
	HintBeyondDeadline
	// RateLimited: a rate limiter refused the call: our own limit on the rate
	// we send at, not a sign the dependency is unwell.
	RateLimited
	// ConcurrencyLimited: a bulkhead or an adaptive concurrency limit refused
	// the call: as many calls as it allows were already in flight (and its
	// queue, if any, was full or the wait too long).
	ConcurrencyLimited
	// TooLittleTime: the call had less time left than the dependency
	// usually takes to answer, so the attempt was not sent: nobody works on
	// a request its caller will have given up on (see pipelinehttp's
	// PropagateDeadline).
	TooLittleTime
)

// String returns the reason in words.
func (r Reason) String() string {
	switch r {
	case DependencyUnavailable:
		return "dependency unavailable"
	case BudgetExhausted:
		return "retry budget exhausted"
	case AttemptsExhausted:
		return "attempts exhausted"
	case Deadline:
		return "deadline exceeded"
	case Canceled:
		return "canceled"
	case Permanent:
		return "permanent failure"
	case HintBeyondDeadline:
		return "retry-after hint outlasts the deadline"
	case RateLimited:
		return "rate limited"
	case ConcurrencyLimited:
		return "concurrency limit reached"
	case TooLittleTime:
		return "too little time left"
	}
	return fmt.Sprintf("pipeline.Reason(%d)", uint8(r))
}

// Error returns the reason in words, as String does: a Reason is the error
// a stop of that reason matches with errors.Is, as a syscall.Errno is.
func (r Reason) Error() string { return r.String() }

// contextErr is the context's error a stop of reason r matches besides r:
// context.DeadlineExceeded for a Deadline stop, context.Canceled for a
// Canceled one, nil for the others.
func (r Reason) contextErr() error {
	switch r {
	case Deadline:
		return context.DeadlineExceeded
	case Canceled:
		return context.Canceled
	}
	return nil
}

// StopError is the one error every stage returns when it refuses a call or gives
// up on it. Treat one as read-only: a stage may hand the same StopError to
// several calls (an open breaker does, for the refusals of one millisecond).
// Match it with errors.AsType[*pipeline.StopError], or its reason with
// errors.Is against the Reason: errors.Is(err, pipeline.BudgetExhausted). A
// Deadline stop also matches context.DeadlineExceeded, and a Canceled stop
// context.Canceled. The last attempt's error and, for a
// deadline or cancellation, the context's cause are reachable through it with
// errors.Is and errors.As.
type StopError struct {
	// Stage is the kind of stage that stopped, its [StageInfo].Kind: one of
	// "timeout", "retry", "breaker", "hedge", "ceiling", "bulkhead",
	// "adaptive", "ratelimit", "throttle", "quota" (the fleet's), "http"
	// (pipelinehttp's refusal of an attempt with too little time left), or
	// a stage of your own's.
	Stage string
	// Name is that stage's own name ([StageInfo].Name), typically the
	// dependency's: in the standard pipeline every stage carries the name of
	// the pipeline's dependency. "" if the stage has none.
	Name string
	// Reason says why.
	Reason Reason
	// RetryAfter is how long the stage expects the refusal to last (the rest of a
	// breaker's break, the time until the budget holds a token), or 0.
	RetryAfter time.Duration
	// Attempts is the number of attempts the call made before it stopped, when
	// the stage that stopped it counts them (a retry does); otherwise 0.
	Attempts int
	// Err is the last attempt's error, or nil if no attempt ran. For an attempt
	// that returned a value with a nil error which the classification judged a
	// failure (a 503 response), Err is a [*ValueError] saying what was judged.
	Err error
	// Cause is the context's cause for a Deadline or Canceled stop: our own
	// timeout's error, or the caller's.
	Cause error
}

// Error describes the stop on one line: the dependency (the stage's name),
// the stage, the reason, the hint, the attempts, the cause of a deadline or
// cancellation when it says more than the reason, and what the last attempt
// ended with:
//
//	pipeline: payments: retry: attempts exhausted after 3 attempts; last attempt: timeout: deadline exceeded (timeout after 2s)
//
// A stop of an inner stage that ended the last attempt is told in short (its
// name only if it differs), and the "pipeline: " of a message within it is
// left out.
func (e *StopError) Error() string {
	var b strings.Builder
	b.WriteString("pipeline: ")
	e.describe(&b, "")
	return b.String()
}

// describe writes e to b, naming its dependency unless it is outer's.
func (e *StopError) describe(b *strings.Builder, outer string) {
	if e.Name != "" && e.Name != outer {
		b.WriteString(e.Name)
		b.WriteString(": ")
	}
	if e.Stage != "" {
		b.WriteString(e.Stage)
		b.WriteString(": ")
	}
	b.WriteString(e.Reason.String())
	if e.RetryAfter > 0 {
		fmt.Fprintf(b, " (retry after %v)", e.RetryAfter)
	}
	if e.Attempts > 0 {
		fmt.Fprintf(b, " after %d attempt", e.Attempts)
		if e.Attempts > 1 {
			b.WriteByte('s')
		}
	}
	if e.Cause != nil && !errors.Is(e.Err, e.Cause) && e.Cause != e.Reason.contextErr() {
		b.WriteString(" (")
		b.WriteString(strings.TrimPrefix(e.Cause.Error(), "pipeline: "))
		b.WriteByte(')')
	}
	if e.Err == nil {
		return
	}
	if e.Attempts > 0 {
		b.WriteString("; last attempt: ")
	} else {
		b.WriteString(": ")
	}
	if inner, ok := e.Err.(*StopError); ok {
		inner.describe(b, cmp.Or(e.Name, outer))
		return
	}
	b.WriteString(strings.TrimPrefix(e.Err.Error(), "pipeline: "))
}

// verdict is the verdict of a stage's own stop e, as [Next.Refuse] gives it:
// for a Canceled or Deadline stop, a Permanent one marked Canceled (the
// caller's doing, or the call's deadline, never the dependency's); for any
// other, a self-imposed Throttled one carrying e's RetryAfter.
func (e *StopError) verdict() outcome.Verdict {
	if e.Reason == Canceled || e.Reason == Deadline {
		return outcome.Verdict{Kind: outcome.Permanent, Canceled: true}
	}
	return outcome.Verdict{Kind: outcome.Throttled, SelfImposed: true}.WithRetryAfter(e.RetryAfter)
}

// Is reports whether target is e's reason or, for a Deadline or Canceled
// stop, the context's error of that reason.
func (e *StopError) Is(target error) bool {
	if r, ok := target.(Reason); ok {
		return r == e.Reason
	}
	return target != nil && target == e.Reason.contextErr()
}

// Unwrap returns the last attempt's error and the cause, whichever are set.
// The slice it returns is a view of e's own fields, so that errors.Is and
// errors.As allocate nothing: do not modify it.
func (e *StopError) Unwrap() []error {
	// Err and Cause are adjacent fields of one type, so together they are laid
	// out as a [2]error (TestStopErrorUnwrapsItsOwnFields checks it).
	switch {
	case e.Err != nil && e.Cause != nil:
		return unsafe.Slice(&e.Err, 2)
	case e.Err != nil:
		return unsafe.Slice(&e.Err, 1)
	case e.Cause != nil:
		return unsafe.Slice(&e.Cause, 1)
	}
	return nil
}

// Interrupted returns the stop of a stage that gave up because ctx is done: a
// Deadline stop if ctx's deadline passed, a Canceled one otherwise, with Cause
// set to context.Cause(ctx), and the stage's kind and name. A stage that waits
// (for a backoff, a permit, a slot) returns it, after filling in Attempts and
// Err if it counts them.
func Interrupted(ctx context.Context, stage StageInfo) *StopError {
	reason := Canceled
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		reason = Deadline
	}
	return &StopError{Stage: stage.Kind, Name: stage.Name, Reason: reason, Cause: context.Cause(ctx)}
}

// ValueError is the error a stop carries for an attempt that returned a value
// and a nil error, and whose value the classification judged a failure: a 503
// response, say. It says what was judged.
type ValueError struct {
	// Verdict is the attempt's verdict.
	Verdict outcome.Verdict
	// Value describes the value: the pipeline's [Options].Describe if set,
	// otherwise the value's Error or String method, otherwise its type.
	Value string
}

// Error says that a value was judged a failure, and which.
func (e *ValueError) Error() string {
	return "pipeline: attempt returned " + e.Value + ", judged " + e.Verdict.String()
}

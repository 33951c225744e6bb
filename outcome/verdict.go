package outcome

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// Kind is the class of an attempt's outcome. The zero value is OK.
type Kind uint8

const (
	// OK means the attempt succeeded.
	OK Kind = iota
	// Transient means the dependency failed in a way that may pass: a timeout, a
	// refused or reset connection, a 503. It is retried and it is breaker evidence.
	Transient
	// Throttled means the dependency refused the work to protect itself (a 429).
	// It is retried after the dependency's hint and is never breaker evidence.
	Throttled
	// Permanent means retrying cannot change the answer (a 400, a validation
	// error, the caller's own cancellation). It is neither retried nor evidence.
	Permanent
)

// ErrUnknownKind is matched, with errors.Is, by the error of an attempt whose
// classification gave it a Kind that is none of the four above: a pipeline
// refuses such a verdict, naming where it came from.
var ErrUnknownKind = errors.New("outcome: not a kind of outcome (use OK, Transient, Throttled or Permanent)")

// String returns the kind's lower-case name.
func (k Kind) String() string {
	switch k {
	case OK:
		return "ok"
	case Transient:
		return "transient"
	case Throttled:
		return "throttled"
	case Permanent:
		return "permanent"
	}
	return fmt.Sprintf("outcome.Kind(%d)", uint8(k))
}

// Verdict is the classification of one attempt. The zero value is a plain success.
//
// A Verdict is eight bytes, so that a pipeline's Result fits in registers; copy it
// freely. The dependency's retry-after hint is kept to the millisecond, rounded
// up, and read with [Verdict.RetryAfter].
type Verdict struct {
	// Kind is the class of the outcome.
	Kind Kind
	// SelfImposed marks a refusal by one of our own stages (an open breaker, an
	// exhausted budget) rather than by the dependency. Such a verdict is never
	// breaker evidence, never charged to a retry budget, and never retried.
	SelfImposed bool
	// Canceled marks an attempt ended by the caller's own cancellation or
	// deadline. Its Kind is Permanent, so it is never retried and never counted
	// against the dependency.
	Canceled bool
	// retryAfter is the hint in milliseconds, 0 for none.
	retryAfter uint32
}

// MaxRetryAfter is the longest retry-after hint a Verdict can carry; longer hints
// are clamped to it.
const MaxRetryAfter = time.Duration(math.MaxUint32) * time.Millisecond

// RetryAfter is the dependency's own hint of when to try again, or 0 for none. A
// retry uses it as given (capped by its maximum delay) instead of its backoff.
func (v Verdict) RetryAfter() time.Duration { return time.Duration(v.retryAfter) * time.Millisecond }

// WithRetryAfter returns v carrying the hint d, rounded up to the millisecond and
// clamped to [0, MaxRetryAfter].
func (v Verdict) WithRetryAfter(d time.Duration) Verdict {
	switch {
	case d <= 0:
		v.retryAfter = 0
	case d >= MaxRetryAfter:
		v.retryAfter = math.MaxUint32
	default:
		v.retryAfter = uint32((d + time.Millisecond - 1) / time.Millisecond)
	}
	return v
}

// Failure reports whether the verdict is evidence that the dependency is failing:
// a Transient verdict that our own stages did not impose.
func (v Verdict) Failure() bool { return v.Kind == Transient && !v.SelfImposed }

// Retryable reports whether a retry may help: a Transient or Throttled verdict that
// is neither self-imposed nor a cancellation.
func (v Verdict) Retryable() bool {
	return (v.Kind == Transient || v.Kind == Throttled) && !v.SelfImposed && !v.Canceled
}

// String describes the verdict, for logs.
func (v Verdict) String() string {
	s := v.Kind.String()
	if v.retryAfter > 0 {
		s += fmt.Sprintf(" (retry after %v)", v.RetryAfter())
	}
	if v.SelfImposed {
		s += " (self-imposed)"
	}
	if v.Canceled {
		s += " (canceled by caller)"
	}
	return s
}

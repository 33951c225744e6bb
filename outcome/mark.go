package outcome

import (
	"errors"
	"time"
)

// Error wraps an error with the verdict its source chose for it. Create one with
// [Mark], [MarkTransient], [MarkThrottled] or [MarkPermanent]; [Of] finds it
// anywhere in an error's chain and trusts it before every other rule.
type Error struct {
	Err     error
	Verdict Verdict
}

// Error returns the wrapped error's text.
func (e *Error) Error() string {
	if e.Err == nil {
		return "outcome: " + e.Verdict.String()
	}
	return e.Err.Error()
}

// Unwrap returns the wrapped error.
func (e *Error) Unwrap() error { return e.Err }

// Mark wraps err with the verdict v. Mark(nil, v) is nil.
func Mark(err error, v Verdict) error {
	if err == nil {
		return nil
	}
	return &Error{Err: err, Verdict: v}
}

// MarkTransient marks err as evidence that the dependency is failing.
func MarkTransient(err error) error { return Mark(err, Verdict{Kind: Transient}) }

// MarkThrottled marks err as the dependency defending itself, with its hint of when
// to try again (0 for none).
func MarkThrottled(err error, retryAfter time.Duration) error {
	return Mark(err, Verdict{Kind: Throttled}.WithRetryAfter(retryAfter))
}

// MarkPermanent marks err as one that retrying cannot fix.
func MarkPermanent(err error) error { return Mark(err, Verdict{Kind: Permanent}) }

// Marked returns the verdict of the outermost [Error] in err's chain, if any.
func Marked(err error) (Verdict, bool) {
	if e, ok := errors.AsType[*Error](err); ok {
		return e.Verdict, true
	}
	return Verdict{}, false
}

package timeout

import (
	"context"
	"fmt"
	"time"

	"github.com/resilience-go/pipeline/outcome"
)

// Error is the cause a timeout stage installs on the context it passes inward
// when its deadline passes. It matches context.DeadlineExceeded and
// outcome.ErrTimeout with errors.Is, so code that checks for a deadline keeps
// working and the pipeline classifies the attempt as Transient.
type Error struct {
	// Duration is the timeout that passed: the stage's configured timeout,
	// or the ceiling a ceiling stage derived for the attempt.
	Duration time.Duration
	// Measured and Quantile are, for a ceiling stage's cut, the estimator's
	// quantile the ceiling was derived from (before its multiple, floor and
	// cap) and which quantile it is, such as 0.95; 0 for a fixed timeout.
	Measured time.Duration
	Quantile float64
}

// Error says which timeout passed and, for a ceiling, what it was measured
// from.
func (e *Error) Error() string {
	if e.Quantile == 0 {
		return fmt.Sprintf("pipeline: timeout after %v", e.Duration)
	}
	return fmt.Sprintf("pipeline: attempt ceiling of %v passed (measured p%g: %v)", e.Duration, e.Quantile*100, e.Measured)
}

// Is reports whether target is context.DeadlineExceeded or outcome.ErrTimeout.
func (e *Error) Is(target error) bool {
	return target == context.DeadlineExceeded || target == outcome.ErrTimeout
}

// Timeout returns true, like every timeout error of the standard library.
func (e *Error) Timeout() bool { return true }

package ceiling

import (
	"context"
	"fmt"
	"time"

	"github.com/resilience-go/pipeline/outcome"
)

// Error is the cause a ceiling stage installs on the context it passes inward
// when the attempt outlives its ceiling. It matches context.DeadlineExceeded
// and outcome.ErrTimeout with errors.Is, as the timeout stage's cause does, so
// code that checks for a deadline keeps working and the pipeline classifies
// the cut attempt as Transient: a retry around the stage tries again.
type Error struct {
	// Limit is the ceiling the attempt outlived.
	Limit time.Duration
	// Measured is the estimator's quantile the ceiling was derived from,
	// before the multiple, the floor and the cap.
	Measured time.Duration
	// Quantile is the quantile Measured is, such as 0.95.
	Quantile float64
}

// Error says which ceiling was passed, and what it was measured from.
func (e *Error) Error() string {
	return fmt.Sprintf("pipeline: attempt ceiling of %v passed (measured p%g: %v)", e.Limit, e.Quantile*100, e.Measured)
}

// Is reports whether target is context.DeadlineExceeded or outcome.ErrTimeout.
func (e *Error) Is(target error) bool {
	return target == context.DeadlineExceeded || target == outcome.ErrTimeout
}

// Timeout returns true, like every timeout error of the standard library.
func (e *Error) Timeout() bool { return true }

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
	// Duration is the stage's configured timeout.
	Duration time.Duration
}

// Error says which timeout elapsed.
func (e *Error) Error() string { return fmt.Sprintf("pipeline: timeout after %v", e.Duration) }

// Is reports whether target is context.DeadlineExceeded or outcome.ErrTimeout.
func (e *Error) Is(target error) bool {
	return target == context.DeadlineExceeded || target == outcome.ErrTimeout
}

// Timeout returns true, like every timeout error of the standard library.
func (e *Error) Timeout() bool { return true }

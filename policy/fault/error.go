package fault

import (
	"errors"
	"fmt"
	"time"
)

// ErrInjected is matched, with errors.Is, by every error the stage injects,
// and by the error of a call whose injected delay its context cut short.
var ErrInjected = errors.New("fault: injected")

// Error is an injected failure. The stage returns it marked with its verdict
// (see outcome.Mark), so the pipeline's stages read the kind it says; find it
// with errors.AsType[*fault.Error].
type Error struct {
	// Kind is the fault: Transient, Throttled or Permanent, or Latency for a
	// call whose context ended during the injected delay.
	Kind Kind
	// RetryAfter is a Throttled fault's hint, 0 for none.
	RetryAfter time.Duration
	// Err is, for a Latency fault, the error of the context that cut the delay
	// short (context.Canceled or context.DeadlineExceeded); nil otherwise.
	Err error
}

// Error says which fault was injected.
func (e *Error) Error() string {
	switch {
	case e.Err != nil:
		return "fault: injected latency cut short: " + e.Err.Error()
	case e.RetryAfter > 0:
		return fmt.Sprintf("fault: injected %v failure (retry after %v)", e.Kind, e.RetryAfter)
	}
	return fmt.Sprintf("fault: injected %v failure", e.Kind)
}

// Is reports whether target is [ErrInjected].
func (e *Error) Is(target error) bool { return target == ErrInjected }

// Unwrap returns the context's error of a Latency fault, nil otherwise.
func (e *Error) Unwrap() error { return e.Err }

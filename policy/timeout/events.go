package timeout

import "time"

// TimedOut reports that a timeout stage's deadline passed before the work inside
// it succeeded. If the work also ignored its context past the grace, the
// pipeline reports that separately, as pipeline.Abandoned and, when the work
// finally returns, pipeline.LateReturn.
type TimedOut struct {
	Timeout time.Duration
	// Measured is, for a ceiling stage's cut, the quantile the ceiling
	// was derived from; 0 for a fixed timeout.
	Measured time.Duration
}

// Name returns "timeout".
func (TimedOut) Name() string { return "timeout" }

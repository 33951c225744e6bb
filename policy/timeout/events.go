package timeout

import "time"

// TimedOut reports that a timeout stage's deadline passed before the work inside
// it succeeded. If the work also ignored its context past the grace, the
// pipeline reports that separately, as pipeline.Abandoned and, when the work
// finally returns, pipeline.LateReturn.
type TimedOut struct {
	Timeout time.Duration
}

// Name returns "timeout".
func (TimedOut) Name() string { return "timeout" }

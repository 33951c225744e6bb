package timeout

import "time"

// TimedOut reports that a timeout stage's deadline passed before the work inside
// it returned. Abandoned is true when the work then ignored the cancellation for
// the whole grace period and the stage returned without it.
type TimedOut struct {
	Timeout   time.Duration
	Abandoned bool
}

// Name returns "timeout".
func (TimedOut) Name() string { return "timeout" }

// LateReturn reports that abandoned work has finally returned, After the stage
// abandoned it. Its result was discarded. It is emitted from the goroutine that
// ran the work, after the call it belonged to has returned.
type LateReturn struct {
	Timeout time.Duration
	After   time.Duration
}

// Name returns "timeout.late_return".
func (LateReturn) Name() string { return "timeout.late_return" }

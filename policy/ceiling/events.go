package ceiling

import "time"

// Cut reports that an attempt outlived its ceiling and was cut: Limit is the
// ceiling, Measured the quantile it was derived from. It is emitted once per
// cut attempt, whether or not the work then honoured its context.
type Cut struct {
	Limit    time.Duration
	Measured time.Duration
}

// Name returns "ceiling.cut".
func (Cut) Name() string { return "ceiling.cut" }

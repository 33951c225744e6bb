package retry

import (
	"time"

	"github.com/resilience-go/pipeline/outcome"
)

// Scheduled reports that a failed attempt will be retried: Attempt is the number
// of the attempt that will run after Delay; Verdict and Err are those of the
// attempt that failed. It is emitted after the budget has paid for the retry and
// before the wait starts, and only when the pipeline has an event hook.
type Scheduled struct {
	Attempt int
	Delay   time.Duration
	Verdict outcome.Verdict
	Err     error
}

// Name returns "retry.scheduled".
func (Scheduled) Name() string { return "retry.scheduled" }

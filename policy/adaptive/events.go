package adaptive

import "time"

// Waited reports that a call waited Wait in the limiter's queue before it got
// its slot; Queued is how many calls still wait, and Limit the limit, as it
// got it. It is emitted only when the pipeline has an event hook; refusals are
// reported as pipeline.Stopped, and revisions of the limit as [Revision].
type Waited struct {
	Wait          time.Duration
	Queued, Limit int
}

// Name returns "adaptive.waited".
func (Waited) Name() string { return "adaptive.waited" }

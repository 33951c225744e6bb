package bulkhead

import "time"

// Waited reports that a call waited Wait in the bulkhead's queue before it got
// its slot. It is emitted only when the pipeline has an event hook; refusals
// are reported as pipeline.Stopped.
type Waited struct {
	Wait time.Duration
}

// Name returns "bulkhead.waited".
func (Waited) Name() string { return "bulkhead.waited" }

package ratelimit

import "time"

// Waited reports that a call waited Wait for its token before it went on. It
// is emitted only when the pipeline has an event hook; refusals are reported
// as pipeline.Stopped.
type Waited struct {
	Wait time.Duration
}

// Name returns "ratelimit.waited".
func (Waited) Name() string { return "ratelimit.waited" }

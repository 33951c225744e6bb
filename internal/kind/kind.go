// Package kind names the kinds of this module's own stages, once: each stage
// says what it is with one of these (pipeline.StageInfo.Kind, the Stage of
// its StopError), and whatever one stage does for another is decided on
// them, never on a spelling written twice: the composition checks
// (pipeline.Check), and the hedge lending its copies' contexts to the stage
// inside it.
package kind

// The kinds of the stages of this module.
const (
	// Timeout is a timeout stage's kind. A stage of this kind sets its
	// deadline on a context lent to it (callctx.Ctx.Lend) instead of deriving
	// one, and never runs what is inside it twice with one context: so a
	// hedge lends each copy's context to a timeout directly inside it.
	Timeout  = "timeout"
	Retry    = "retry"
	Breaker  = "breaker"
	Hedge    = "hedge"
	Fallback = "fallback"
	Ceiling  = "ceiling"
	Fault    = "fault"
	Bulkhead = "bulkhead"
	Adaptive = "adaptive"
	Rate     = "ratelimit"
	Throttle = "throttle"
)

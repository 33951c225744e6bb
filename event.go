package pipeline

import (
	"time"

	"github.com/resilience-go/pipeline/outcome"
)

// Event is something a stage reports through the pipeline's hook ([Options].OnEvent).
// The events of this module are the struct types in this package and in each
// stage's package; a user's own stage may emit its own types.
type Event interface {
	// Name is a short, stable label for the kind of event, such as "attempt".
	Name() string
}

// AttemptFinished reports one attempt of the caller's Func: which attempt it was,
// its verdict, how long it ran on the pipeline's clock, and its error.
type AttemptFinished struct {
	Attempt  int
	Verdict  outcome.Verdict
	Duration time.Duration
	Err      error
}

// Name returns "attempt".
func (AttemptFinished) Name() string { return "attempt" }

// Stopped reports a stage refusing a call or giving up on it, with the error the
// stage returned.
type Stopped struct {
	Err *StopError
}

// Name returns "stopped".
func (Stopped) Name() string { return "stopped" }

// Abandoned reports that the work of an attempt ignored its context for the
// whole grace a timeout stage gave it, and that the attempt returned without it.
// The goroutine running the work goes on until the work returns.
type Abandoned struct {
	Attempt int
	Grace   time.Duration
}

// Name returns "abandoned".
func (Abandoned) Name() string { return "abandoned" }

// LateReturn reports that abandoned work has finally returned, After it was
// abandoned; its result was discarded. It is emitted from the goroutine that ran
// the work, after the call it belonged to has returned.
type LateReturn struct {
	Attempt int
	After   time.Duration
}

// Name returns "late_return".
func (LateReturn) Name() string { return "late_return" }

// Waited reports that a call waited Wait to be let in by the [Gate] of the
// stage its [Source] names: in a bulkhead's or an adaptive limit's queue for
// a slot, or for a rate limiter's token. Queued and Limit are how many calls
// still waited and the limit, as the call got in, from a gate that says (an
// adaptive limit does), and 0 otherwise. A call let in at once emits none,
// and a refusal is reported as [Stopped].
type Waited struct {
	Wait          time.Duration
	Queued, Limit int
}

// Name returns "waited".
func (Waited) Name() string { return "waited" }

package simulation

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/resilience-go/pipeline/outcome"
)

// Model describes a dependency: how long each attempt takes and how it ends.
// A Model is a configuration value; [Run] calls Start once per run to get the
// dependency's state at time zero, so one Model can serve any number of runs,
// one after another or at once.
//
// The models of this package wrap one another: each has a Base model whose
// answers it changes, so Outage{Base: Healthy{...}, From: 20 * time.Second,
// To: 25 * time.Second} is a healthy dependency with a five-second outage.
type Model interface {
	// Start validates the model and returns its state for one run, or an error
	// naming the setting that cannot work.
	Start() (Dependency, error)
}

// Dependency is one run's modelled dependency. The simulation calls Respond
// once per attempt that reaches it (once per copy of a hedged attempt), in order
// of the attempts' start times, on one goroutine, so a Dependency needs no lock.
type Dependency interface {
	// Respond decides how the attempt a ends.
	Respond(a Attempt) Response
}

// Attempt is what a dependency is told about one attempt.
type Attempt struct {
	// At is when the attempt starts, on the run's virtual time (0 is the start
	// of the run).
	At time.Duration
	// Limit is how long the caller will wait for it: the smaller of the client's
	// attempt timeout and what is left of the call's deadline, or 0 for no limit.
	// An answer later than Limit is cut at Limit by the client.
	Limit time.Duration
	// InFlight is the number of attempts that reached the dependency before this
	// one and have not ended yet. A hedged attempt's copies count one each, and
	// a copy cancelled because another won stops counting when it is cancelled.
	InFlight int
	// Rand is the run's source of model randomness, seeded from the run's seed.
	// A model draws from it and from nothing else.
	Rand *rand.Rand

	// call is the index of the call among all the calls of the run, in the
	// order they were offered, and copy the index of this copy of the call's
	// attempt (0 for the first, k for the k-th hedge). Tests script by them.
	call, copy int
}

// Response is how an attempt ends, as the dependency would have it.
type Response struct {
	// Latency is how long the attempt takes. The client stops waiting at the
	// attempt's Limit: a longer attempt ends there, as a Transient timeout.
	Latency time.Duration
	// Verdict is the attempt's classification when it ends within its Limit:
	// Kind OK for a success, Transient for a failure; Throttled and Permanent
	// answers are allowed too.
	Verdict outcome.Verdict
}

// Interval is a stretch of a run's virtual time, [From, To). A To of 0 means
// the interval never ends.
type Interval struct {
	From, To time.Duration
	// Name says what happens in the interval when it is a model's fault, such
	// as "outage" or "brownout (10x)": a chart names the fault's band by it
	// (see [FaultBands]). Empty means "fault". It changes nothing about the
	// run.
	Name string
}

// Contains reports whether t lies in the interval.
func (i Interval) Contains(t time.Duration) bool {
	return t >= i.From && (i.To == 0 || t < i.To)
}

// validate refuses an interval that starts before 0 or ends before it starts;
// name is the model that owns it.
func (i Interval) validate(name string) error {
	if i.From < 0 {
		return fmt.Errorf("simulation: %s.From must not be negative, got %v", name, i.From)
	}
	if i.To != 0 && i.To <= i.From {
		return fmt.Errorf("simulation: %s.To (%v) must be after %s.From (%v), or 0 for never", name, i.To, name, i.From)
	}
	return nil
}

// Faulty is implemented by models that contain scheduled faults, such as
// [Outage], [Brownout] and [FailingFraction]. The report measures the time to
// recover from the end of the last of them. A wrapping model lists its own
// fault and its base model's.
type Faulty interface {
	// Faults returns the model's fault intervals, in no particular order.
	Faults() []Interval
}

// faultsOf returns m's fault intervals, or nil if m has none.
func faultsOf(m Model) []Interval {
	if f, ok := m.(Faulty); ok {
		return f.Faults()
	}
	return nil
}

// startBase starts a wrapping model's base, which is Healthy{} when nil.
func startBase(base Model) (Dependency, error) {
	if base == nil {
		base = Healthy{}
	}
	return base.Start()
}

// withFault returns base's faults with f added.
func withFault(base Model, f Interval) []Interval {
	return append(faultsOf(base), f)
}

package fault

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/resilience-go/pipeline/outcome"
)

// Config configures a fault-injection stage for results of type T. Its zero
// value injects nothing: the stage is off unless Enabled is set, and each
// fault is off while its rate is 0. Settings that cannot work are refused by
// [Config.Validate] and [New] with an error naming each field and its value,
// whether or not the stage is enabled, so that a configuration kept for a game
// day is checked when it is written.
//
// Each rate is the fraction of the calls through the stage that get the
// fault. The outcome faults (Transient, Throttled, Permanent, Value) exclude
// one another: one draw per call picks at most one, so their rates must sum
// to at most 1. Latency is drawn apart, and may come before an outcome fault
// or before the real work. Rates are applied to within 2^-53 (a draw is 53
// random bits); a rate under that is 0.
type Config[T any] struct {
	// Name names the stage; its events carry it (pipeline.Source.Name). Empty
	// means unnamed.
	Name string
	// Enabled turns the stage on. False (the default) makes it pass every
	// call through, drawing nothing.
	Enabled bool
	// Transient is the rate of calls failed with an injected error the
	// pipeline classifies as Transient: retried, and breaker evidence.
	Transient float64
	// Throttled is the rate of calls failed with an injected error classified
	// as Throttled, carrying the hint RetryAfter.
	Throttled float64
	// RetryAfter is the retry-after hint of the Throttled errors. Zero means
	// none; it must not be negative.
	RetryAfter time.Duration
	// Permanent is the rate of calls failed with an injected error classified
	// as Permanent: never retried, never breaker evidence.
	Permanent float64
	// Value is the rate of calls answered, without running the work, with a
	// value from NewValue and the verdict ValueVerdict.
	Value float64
	// NewValue makes the value of each Value fault, so that a value holding a
	// resource (a response whose body is read and closed) is fresh each time.
	// It must be safe for concurrent use. Nil means T's zero value.
	NewValue func() T
	// ValueVerdict is the verdict of a Value fault, as the pipeline's
	// classifier would have judged the value (it is not consulted): a 503
	// response's is Transient. Zero means OK.
	ValueVerdict outcome.Verdict
	// Latency is the rate of calls delayed by Delay, on the pipeline's clock,
	// before they go on (to an outcome fault or to the work). A delay ends
	// early when the call's context is done.
	Latency float64
	// Delay is the injected latency. It must be positive when Latency is set,
	// and not negative in any case.
	Delay time.Duration
	// Rand is the random source of the draws: seed it (rand.NewPCG(seed, 0))
	// to make a run reproducible. The stage serializes its draws with a mutex
	// of its own, so any source will do. Nil means math/rand/v2's top-level
	// generator.
	Rand rand.Source
}

// Validate reports every setting that cannot work, each naming its field and
// value, joined into one error; it returns nil for a usable Config.
func (c Config[T]) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("fault: Config."+format, args...))
	}
	rates := []struct {
		field string
		rate  float64
	}{{"Transient", c.Transient}, {"Throttled", c.Throttled}, {"Permanent", c.Permanent}, {"Value", c.Value}, {"Latency", c.Latency}}
	valid := true
	for _, r := range rates {
		if math.IsNaN(r.rate) || r.rate < 0 || r.rate > 1 {
			bad("%s is a rate and must lie in [0, 1], got %v", r.field, r.rate)
			valid = false
		}
	}
	if sum := c.Transient + c.Throttled + c.Permanent + c.Value; valid && sum > 1 {
		bad("Transient + Throttled + Permanent + Value must not exceed 1 (one call gets at most one of them), got %v + %v + %v + %v = %v",
			c.Transient, c.Throttled, c.Permanent, c.Value, sum)
	}
	if c.RetryAfter < 0 {
		bad("RetryAfter must not be negative, got %v", c.RetryAfter)
	}
	if c.Delay < 0 || (c.Delay == 0 && c.Latency > 0) {
		bad("Delay must be positive when Config.Latency is set (%v), got %v", c.Latency, c.Delay)
	}
	return errors.Join(errs...)
}

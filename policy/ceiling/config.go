package ceiling

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/resilience-go/pipeline/latency"
)

// Defaults of [Config]'s zero-valued fields.
const (
	// defaultMultiple is how many times the measured quantile an attempt may
	// run: three times the p95 is rarely reached by an attempt that is merely
	// slow, and soon reached by one that is stuck.
	defaultMultiple = 3.0
	// defaultQuantile is the latency quantile the ceiling is a multiple of.
	defaultQuantile = 0.95
	// defaultMinSamples is how many samples the estimator must hold before the
	// stage cuts anything. A cut costs a whole attempt, where a hedge costs
	// one copy, so it waits for more evidence than the hedge's 20: with 50,
	// the p95 lies among the three largest samples rather than being the
	// largest.
	defaultMinSamples = 50
	// defaultFloor is the shortest ceiling, whatever the measure says: above
	// the 200 ms minimum TCP retransmission timeout, so that one lost packet
	// on a fast dependency's connection is waited out rather than cut.
	defaultFloor = 250 * time.Millisecond
	// defaultCap is the longest ceiling, whatever the measure says: the
	// standard pipeline's attempt timeout, so that the stage on its own bounds
	// an attempt as that timeout would.
	defaultCap = 10 * time.Second
)

// Config configures a ceiling stage. The zero value of every field means its
// default; settings that cannot work are refused by [Config.Validate] and
// [New] with an error naming the field and its value.
type Config struct {
	// Name names the stage, typically after the dependency it calls; its stop
	// errors and events carry it (pipeline.StopError.Name,
	// pipeline.Source.Name). Empty means unnamed.
	Name string
	// Estimator measures the dependency's latency and supplies the quantile.
	// Share the hedge stage's, if the pipeline has one, and set FedElsewhere.
	// Nil means a new estimator with latency's default 30 s window on Clock.
	Estimator *latency.Estimator
	// Multiple of the measured quantile an attempt may run before it is cut.
	// Zero means 3; otherwise it must be a finite number
	// of at least 1, since a ceiling under the quantile would cut healthy
	// attempts.
	Multiple float64
	// Quantile of the estimator's latency the ceiling is a multiple of. Zero
	// means 0.95; otherwise it must lie in (0, 1].
	Quantile float64
	// Floor is the shortest ceiling. Zero means 250 ms; it
	// must not be negative, nor above the cap.
	Floor time.Duration
	// Cap is the longest ceiling. Zero means 10 s; it must not
	// be negative, nor below the floor.
	Cap time.Duration
	// MinSamples is how many samples the estimator must hold over its window
	// before the stage cuts anything; until then it passes every attempt
	// through. Zero means 50; it must not be negative.
	MinSamples int
	// FedElsewhere says that another stage records the successful attempts
	// into Estimator: a hedge stage sharing it, placed inside this one. The
	// stage then records only the attempts it cut, which no other stage
	// measures. False (the default): the stage records every successful
	// attempt's duration too; set it when sharing the estimator with a hedge,
	// or each success would be counted twice.
	FedElsewhere bool
	// Clock is the clock of the estimator the stage makes when Estimator is
	// nil. Nil means real time. The cut itself is a context deadline, which
	// runs on real time whatever the clock (see the package documentation).
	Clock clockwork.Clock
}

// Validate reports every setting that cannot work, each naming its field and
// value, joined into one error; it returns nil for a usable Config.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("ceiling: Config."+format, args...))
	}
	if m := c.Multiple; m != 0 && (math.IsNaN(m) || math.IsInf(m, 0) || m < 1) {
		bad("Multiple must be a finite number of at least 1 (0 means the default %v), got %v", defaultMultiple, m)
	}
	if q := c.Quantile; math.IsNaN(q) || q < 0 || q > 1 {
		bad("Quantile must lie in (0, 1] (0 means the default %v), got %v", defaultQuantile, q)
	}
	if c.Floor < 0 {
		bad("Floor must not be negative (0 means the default %v), got %v", defaultFloor, c.Floor)
	}
	if c.Cap < 0 {
		bad("Cap must not be negative (0 means the default %v), got %v", defaultCap, c.Cap)
	}
	if floor, ceil := c.bounds(); c.Floor >= 0 && c.Cap >= 0 && floor > ceil {
		bad("Floor (%v) must not be above Config.Cap (%v)%s", floor, ceil, defaulted(c))
	}
	if c.MinSamples < 0 {
		bad("MinSamples must not be negative (0 means the default %d), got %d", defaultMinSamples, c.MinSamples)
	}
	return errors.Join(errs...)
}

// bounds returns the floor and the cap, with their defaults.
func (c Config) bounds() (floor, ceil time.Duration) {
	floor, ceil = c.Floor, c.Cap
	if floor == 0 {
		floor = defaultFloor
	}
	if ceil == 0 {
		ceil = defaultCap
	}
	return floor, ceil
}

// defaulted says which of the floor and the cap took its default, for the
// error of a floor above the cap.
func defaulted(c Config) string {
	switch {
	case c.Floor == 0:
		return " (the floor is the default)"
	case c.Cap == 0:
		return " (the cap is the default)"
	}
	return ""
}

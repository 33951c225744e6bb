package simulation

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// Arrivals is how each process's calls arrive: when, at a given rate, it
// offers the next one. The zero value is [Even].
type Arrivals uint8

const (
	// Even spaces a process's calls exactly 1/rate apart, starting at a phase
	// of the process's own, drawn from the seed: the steady load of a client
	// fed by a timer. It is the zero value.
	Even Arrivals = iota
	// Poisson makes each process's calls a Poisson process: the gaps between
	// them are independent and exponentially distributed with mean 1/rate,
	// drawn from the process's own seeded stream, so calls bunch into bursts
	// and thin into lulls as the calls of many independent users do.
	Poisson
)

// String returns the kind's name: "even" or "Poisson".
func (a Arrivals) String() string {
	switch a {
	case Even:
		return "even"
	case Poisson:
		return "Poisson"
	}
	return fmt.Sprintf("simulation.Arrivals(%d)", uint8(a))
}

// Step is a change of load during a run: from At on, until the next step,
// each process offers Rate calls a second. A Rate of 0 means no calls in that
// stretch, for load that stops and starts again.
//
// A call belongs to the stretch it falls in, the stretch's end excluded, so a
// call that would fall exactly at a step's At is the new stretch's. Under
// [Even] arrivals a step restarts the spacing: the process offers its calls at
// At + phase + k/Rate for k = 0, 1, ..., phase being the same fraction of
// 1/Rate as the process's first phase is of 1/Config.Rate. The gap across a
// step is then neither spacing (even for a step to the same rate), and the
// processes of a fleet stay apart. Under [Poisson] arrivals a gap that would
// reach a step is dropped and the next is drawn from the step's At at its
// Rate, which the exponential's memorylessness makes exactly a Poisson process
// of piecewise-constant rate.
type Step struct {
	// At is when the step takes effect, on the run's time. It lies in
	// [0, Config.Duration), after the previous step's At.
	At time.Duration
	// Rate is how many calls a second each process offers from At on: a
	// finite number, 0 or above.
	Rate float64
}

// validateLoad returns an error for each setting of c's Arrivals and Steps
// that cannot work, naming the field, its index and its value.
func (c Config) validateLoad() []error {
	var errs []error
	if c.Arrivals > Poisson {
		errs = append(errs, fmt.Errorf("simulation: Config.Arrivals must be Even or Poisson, got %v", c.Arrivals))
	}
	for i, st := range c.Steps {
		switch {
		case st.At < 0 || (c.Duration > 0 && st.At >= c.Duration):
			errs = append(errs, fmt.Errorf("simulation: Config.Steps[%d].At must lie in [0, Config.Duration) (%v), got %v", i, c.Duration, st.At))
		case i > 0 && st.At <= c.Steps[i-1].At:
			errs = append(errs, fmt.Errorf("simulation: Config.Steps[%d].At must be after Config.Steps[%d].At (%v), got %v", i, i-1, c.Steps[i-1].At, st.At))
		}
		if !(st.Rate >= 0 && !math.IsInf(st.Rate, 1)) {
			errs = append(errs, fmt.Errorf("simulation: Config.Steps[%d].Rate must be a finite number of at least 0, got %v", i, st.Rate))
		}
	}
	return errs
}

// pacer paces one process's calls: it knows the stretch of constant rate its
// next call falls in, and how far into it the process is.
//
// Stretch 0 runs from 0 at Config.Rate; stretch j > 0 from Steps[j-1].At at
// Steps[j-1].Rate; each ends where the next begins, the last at
// Config.Duration. A call belongs to the stretch it falls in, the end of a
// stretch excluded.
type pacer struct {
	// stretch is the stretch the next call is looked for in, and from its
	// start (for Poisson arrivals, the last call offered in it, if later).
	stretch int
	from    time.Duration
	// k counts the even arrivals scheduled in the stretch.
	k int
	// frac is the process's phase as a fraction of a gap, in [0, 1), which
	// places its even arrivals in the stretches after the first.
	frac float64
	// gaps draws the gaps of Poisson arrivals; nil for even ones.
	gaps *rand.Rand
}

// newPacer returns the pacer of a process whose phase fraction is frac, its
// gaps drawn from src under Poisson arrivals (src is not used otherwise).
func newPacer(kind Arrivals, frac float64, src rand.Source) pacer {
	a := pacer{frac: frac}
	if kind == Poisson {
		a.gaps = rand.New(src)
	}
	return a
}

// next returns when the process's next call arrives, and false when it
// would arrive at or after c.Duration (the process then offers no more).
// phase is the process's phase in the first stretch.
//
// It passes over the stretches the call does not fall in. Under even
// arrivals the k-th call of a stretch that starts at S with rate r falls at
// S + phase + k/r, the phase of a later stretch being the process's phase
// fraction of 1/r: a step restarts the spacing at its At. Under Poisson
// arrivals the call falls one exponential gap, drawn at the stretch's rate,
// after the last call or the start of the stretch, whichever is later; a gap
// that reaches the stretch's end is dropped and the next is drawn from that
// end at the next stretch's rate, which the exponential's memorylessness
// makes exact. A stretch at rate 0 holds no call.
func (a *pacer) next(c *Config, phase time.Duration) (time.Duration, bool) {
	for ; a.stretch <= len(c.Steps); a.enter(c) {
		rate, end := c.Rate, c.Duration
		if a.stretch > 0 {
			rate = c.Steps[a.stretch-1].Rate
		}
		if a.stretch < len(c.Steps) {
			end = c.Steps[a.stretch].At
		}
		if rate == 0 {
			continue
		}
		if a.gaps != nil {
			if gap, ok := within(a.gaps.ExpFloat64()*float64(time.Second)/rate, end-a.from); ok {
				a.from += gap
				return a.from, true
			}
			continue
		}
		if a.stretch > 0 {
			phase = evenPhase(a.frac, rate)
		}
		// k*second/r rather than k*(second/r): the first stretch's calls
		// fall where they always have, so runs without steps are unchanged.
		if off, ok := within(float64(a.k)*float64(time.Second)/rate, end-a.from-phase); ok {
			a.k++
			return a.from + phase + off, true
		}
	}
	return 0, false
}

// enter moves a to the start of the stretch after its own.
func (a *pacer) enter(c *Config) {
	if a.stretch < len(c.Steps) {
		a.from = c.Steps[a.stretch].At
	}
	a.stretch++
	a.k = 0
}

// evenPhase returns the phase of even arrivals at rate for a process whose
// phase fraction is frac: frac of the gap 1/rate, the gap and the phase each
// truncated to the nanosecond. A phase beyond time.Duration's range is the
// largest Duration, which no run reaches.
func evenPhase(frac, rate float64) time.Duration {
	if frac == 0 {
		return 0 // not 0 x an infinite gap
	}
	ns := frac * math.Trunc(float64(time.Second)/rate)
	if !(ns < 1<<63) {
		return math.MaxInt64
	}
	return time.Duration(ns)
}

// within returns ns nanoseconds (not negative) as a Duration, truncated, and
// whether it is below limit; a value beyond time.Duration's range is not, and
// is not converted.
func within(ns float64, limit time.Duration) (time.Duration, bool) {
	if !(ns < 1<<63) {
		return 0, false
	}
	d := time.Duration(ns)
	return d, d < limit
}

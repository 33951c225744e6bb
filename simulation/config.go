package simulation

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/resilience-go/pipeline/budget"
	"github.com/resilience-go/pipeline/policy/breaker"
	"github.com/resilience-go/pipeline/policy/retry"
	"github.com/resilience-go/pipeline/policy/throttle"
)

// Config is one simulated run: a dependency, the client processes that call it
// and how, and for how long. [Run] validates it and runs it.
type Config struct {
	// Name labels the run in its report, for example "with budget". Empty means
	// no label.
	Name string
	// Seed seeds every random draw of the run: the dependency model, each
	// process's arrival phase (or, under Poisson arrivals, its gaps), break
	// jitter and retry jitter. The same Config with the same Seed gives a
	// byte-identical report. Zero is a valid seed.
	Seed uint64
	// Duration is how long calls are offered, from time 0. Calls still running
	// at the end are run to completion. It has no default: it must be positive.
	Duration time.Duration
	// Dependency is the modelled dependency every process calls. It is required.
	Dependency Model
	// Processes is how many client processes call the dependency, each with its
	// own breaker, budget and random sources (a fleet). Zero means 1.
	Processes int
	// Rate is how many calls a second each process offers (until the first of
	// Steps, if any), arriving as Arrivals says. It has no default: it must be
	// a finite number above 0.
	Rate float64
	// Arrivals is how each process's calls arrive at its rate: [Even] (the
	// zero value), evenly spaced, each process starting at its own phase drawn
	// from the seed; or [Poisson], with exponential gaps drawn from the
	// process's own seeded stream.
	Arrivals Arrivals
	// Steps changes the rate during the run: from each step's At on, each
	// process offers the step's Rate calls a second, until the next step.
	// Their At lie in [0, Duration), in increasing order; a Rate may be 0 (no
	// calls until the next step). Nil means Rate throughout.
	Steps []Step
	// Client is how each process calls the dependency.
	Client Client
}

// Client is how one client process calls the dependency: the stages of the
// library's card, timeout, retry (paid for by a budget), breaker, hedge, each of
// which may be left out.
type Client struct {
	// Breaker configures the process's own circuit breaker, a real
	// *breaker.Breaker consulted before every attempt. Nil means no breaker.
	// The run supplies its Clock (the run's virtual clock), Rand (seeded from the
	// run's seed) and OnEvent (to count opens); whatever the Config holds in
	// those fields is ignored.
	Breaker *breaker.Config
	// Budget configures the process's own retry budget, a real *budget.Budget,
	// which pays for its retries and its hedges. Nil means unlimited retries and
	// hedges; without Retry and Hedge it is not used. The run supplies its Clock.
	// Successes deposit into it only through the retry loop, as in the card, so
	// without Retry it is refilled by time alone.
	Budget *budget.Config
	// Retry configures the retry loop. Nil means one attempt per call.
	Retry *Retry
	// Hedge configures the process's hedging, which follows the rules of the
	// hedge stage (package policy/hedge) placed inside the breaker, with a real
	// *latency.Estimator. Nil means no hedging.
	Hedge *Hedge
	// AttemptTimeout is how long the client waits for one attempt before it
	// gives up on it as a Transient failure (the timeout stage inside the
	// retry, and inside the hedge: with hedging it bounds each copy from its own
	// start). Zero means no attempt timeout; it must not be negative.
	AttemptTimeout time.Duration
	// Deadline bounds the whole call, retries and backoffs included (the timeout
	// stage outside the retry). Zero means no deadline; it must not be negative.
	Deadline time.Duration
	// Throttle configures the process's client-side adaptive throttle (package
	// policy/throttle), a real *throttle.Throttle asked before every attempt,
	// inside the retry and before the breaker, if any, and told every
	// attempt's verdict. Its refusals stop the call as a breaker's do, and are
	// counted with them (Report.RefusedByBreaker; Report.ThrottleRefusals
	// counts them alone). Nil means no throttle. The run supplies its Clock and
	// Rand (seeded from the run's seed).
	Throttle *throttle.Config
	// Limit, if set, limits each process's calls in flight, outermost (see
	// [Limit]); with it the report counts calls refused by the limit, calls
	// timed out, the limit and what the dependency holds, per second, and
	// each criticality level apart. Nil means no limit.
	Limit *Limit
	// SlowJudge, when set, gives each process an instrument that judges its
	// attempts slow or not by a threshold of its choosing over a trip window like
	// the breaker's, and reports what that slow-call trip would have seen. It
	// changes nothing about how calls go. Nil means none.
	SlowJudge *SlowJudge
}

// Retry configures the simulated retry loop, which follows the rules of the
// retry stage (package policy/retry) with a real [retry.Backoff] and a real
// budget. The zero value is the retry stage's default: 3 attempts, exponential
// backoff with full jitter, a 100 ms pause after a refusal.
type Retry struct {
	// MaxAttempts is the most attempts of one call, the first included. Zero
	// means 3.
	MaxAttempts int
	// Backoff decides the wait before each retry; it draws from the process's
	// own seeded source. Nil means the zero [retry.Exponential].
	Backoff retry.Backoff
	// RefusalPause is how long a call refused by the breaker waits before it
	// ends. Zero means 100 ms.
	RefusalPause time.Duration
}

// Validate reports every setting of c that cannot work, each naming its field
// and value, joined into one error; nil means c can run. It does not start the
// dependency model; [Run] reports a model's errors.
func (c Config) Validate() error {
	var errs []error
	if c.Duration <= 0 {
		errs = append(errs, fmt.Errorf("simulation: Config.Duration must be positive, got %v", c.Duration))
	}
	if c.Dependency == nil {
		errs = append(errs, errors.New("simulation: Config.Dependency is required, got nil"))
	}
	if c.Processes < 0 {
		errs = append(errs, fmt.Errorf("simulation: Config.Processes must not be negative, got %d", c.Processes))
	}
	if !(c.Rate > 0 && !math.IsInf(c.Rate, 1)) {
		errs = append(errs, fmt.Errorf("simulation: Config.Rate must be a finite number above 0, got %v", c.Rate))
	}
	errs = append(errs, c.validateLoad()...)
	if c.Client.AttemptTimeout < 0 {
		errs = append(errs, fmt.Errorf("simulation: Client.AttemptTimeout must not be negative, got %v", c.Client.AttemptTimeout))
	}
	if c.Client.Deadline < 0 {
		errs = append(errs, fmt.Errorf("simulation: Client.Deadline must not be negative, got %v", c.Client.Deadline))
	}
	if r := c.Client.Retry; r != nil {
		rc := retry.Config{MaxAttempts: r.MaxAttempts, Backoff: r.Backoff, RefusalPause: r.RefusalPause}
		if err := rc.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("simulation: Client.Retry: %w", err))
		}
	}
	if b := c.Client.Breaker; b != nil {
		if err := b.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("simulation: Client.Breaker: %w", err))
		}
	}
	if b := c.Client.Budget; b != nil {
		if err := b.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("simulation: Client.Budget: %w", err))
		}
	}
	if h := c.Client.Hedge; h != nil {
		if err := h.validate(); err != nil {
			errs = append(errs, fmt.Errorf("simulation: Client.Hedge: %w", err))
		}
	}
	if tc := c.Client.Throttle; tc != nil {
		if err := tc.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("simulation: Client.Throttle: %w", err))
		}
	}
	if l := c.Client.Limit; l != nil {
		errs = append(errs, l.validate()...)
	}
	if j := c.Client.SlowJudge; j != nil {
		if err := j.validate(c.Client.Breaker != nil); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// processes returns the number of client processes, 1 for the zero value.
func (c Config) processes() int { return max(c.Processes, 1) }

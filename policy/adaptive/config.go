package adaptive

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/resilience-go/pipeline/criticality"
	"github.com/resilience-go/pipeline/latency"
)

// Defaults of [Config]'s zero-valued fields.
const (
	// defaultInitialLimit is the limit a new limiter starts with, before it
	// has measured anything: the starting point of Netflix's and failsafe-go's
	// limiters, enough for a dependency answering in 50 ms to serve 400 calls a
	// second.
	defaultInitialLimit = 20
	// defaultMinLimit is the lowest limit: one call at a time still measures
	// the dependency, so the limit can always climb back.
	defaultMinLimit = 1
	// defaultMaxLimit is the highest limit. The limit grows only while calls
	// use half of it, so this is a safety cap, not a target.
	defaultMaxLimit = 1000
	// defaultQuantile is the latency quantile the limiter compares: the fast
	// end of the distribution, what an attempt takes when it does not wait
	// behind others. A queue delays every call, so it shows there first; the
	// slow tail says more about the dependency's bad moments than about load.
	defaultQuantile = 0.1
	// defaultTolerance is how much slower than its baseline the recent
	// quantile may be before the limiter cuts: 1.5 is well above the noise of
	// a quantile of a second's samples and the histogram's 19% buckets, and
	// lets a queue of about half the dependency's capacity form before a cut.
	defaultTolerance = 1.5
	// defaultInterval is how often the limit is revised: a second holds
	// enough samples for a quantile at a few dozen calls a second, and is
	// short next to the time a brownout lasts.
	defaultInterval = time.Second
	// defaultMinSamples is how many answers an interval, and successes the
	// estimator's window, must hold for the limit to be revised.
	defaultMinSamples = 10
	// defaultWindow is the window of the estimator the limiter builds when
	// Config.Estimator is nil: latency's default, the hedge's 30 s, so that a
	// limiter's own estimator and a shared one behave alike. A long window
	// keeps the baseline from following a queue that lasts; a dependency that
	// turns slower on its own is noticed sooner by the rule itself (see
	// [Slower]).
	defaultWindow = latency.DefaultWindow
	// defaultMaxWait is how long a queued call waits for a slot when
	// Config.MaxWait is 0 and the limiter has a queue.
	defaultMaxWait = time.Second
)

// Config configures a [Limiter]. The zero value of every field means its
// default. Settings that cannot work are refused by [Config.Validate] and
// [New] with an error naming each bad field and its value.
type Config struct {
	// Name names the limiter, typically after the dependency it protects; its
	// stop errors and events carry it (pipeline.StopError.Name,
	// pipeline.Source.Name). Empty means unnamed.
	Name string
	// Estimator measures the dependency's latency and supplies the baseline:
	// its Quantile over its window. Share one among the stages that call the
	// same dependency (a hedge's). Nil means a new estimator with a
	// 30 s window on Clock.
	Estimator *latency.Estimator
	// FedElsewhere says that another stage records the successful calls into
	// Estimator: a hedge stage sharing it, placed inside this one. The
	// limiter then only reads it. False (the default): the limiter records
	// every successful call's duration; set it when sharing the estimator
	// with a hedge, or each success would be counted twice.
	FedElsewhere bool
	// InitialLimit is the limit a new limiter starts with. Zero means
	// 20, brought between MinLimit and MaxLimit if
	// they exclude it; a value set must lie between them.
	InitialLimit int
	// MinLimit is the lowest limit. Zero means 1; it must
	// not be negative.
	MinLimit int
	// MaxLimit is the highest limit. Zero means 1000; it
	// must not be below MinLimit.
	MaxLimit int
	// Quantile is the latency quantile compared, recent against baseline.
	// Zero means 0.1; otherwise it must lie in (0, 1).
	Quantile float64
	// Tolerance is how many times its baseline the recent quantile may reach
	// before the limiter cuts. Zero means 1.5; otherwise
	// it must be a finite number above 1.
	Tolerance float64
	// Interval is how often the limit is revised. Zero means
	// 1 s; it must not be negative.
	Interval time.Duration
	// MinSamples is how many answers an interval, and successes the
	// estimator's window, must hold for the limit to be revised. Zero means
	// 10; it must not be negative.
	MinSamples int
	// MaxQueue is how many calls may wait for a slot when the limit is
	// reached; one more is refused at once. Zero (the default) means no
	// queue. It must not be negative.
	MaxQueue int
	// MaxWait is how long a queued call waits before it is refused. Zero
	// means 1 s; it must not be negative, and may be set
	// only with a queue.
	MaxWait time.Duration
	// Shares is how much of the limit the calls of each level
	// (criticality.From of the call's context) may fill, as for a
	// bulkhead: by default Sheddable calls three quarters of it, the others
	// all of it, and the queue serves higher levels first (see
	// criticality.Shares). The limit itself is learnt from every call's
	// latency, whatever its level.
	Shares criticality.Shares
	// Guarantees is how much of the limit, as it moves, is kept for
	// Default and Sheddable calls, as for a bulkhead (see
	// bulkhead.Config.Guarantees): a level holding fewer slots than its
	// guarantee takes any free slot, and slots it leaves unused are lent to
	// the others until it asks for them. So a flood of Critical calls that
	// cuts the limit still leaves Sheddable ones their part of it. The zero
	// value keeps nothing.
	Guarantees criticality.Guarantees
	// TenantShare is the fraction of the slots its level may fill that the
	// calls of one tenant (criticality.Tenant of the call's context) may
	// hold at once, as for a bulkhead (see bulkhead.Config.TenantShare): of
	// the limit as it moves, so that one noisy tenant cannot take its
	// level's share while the limit is cut. Zero (the default) and 1 bound
	// no tenant; otherwise it must lie in (0, 1). The limit is still learnt
	// from every call, whatever its tenant.
	TenantShare float64
	// Clock is the clock of the estimator the limiter builds when Estimator
	// is nil, and times queued calls' waits. The limiter reads time from its
	// estimator, so give a shared estimator the same clock. Nil means real
	// time.
	Clock clockwork.Clock
}

// Validate reports every setting that cannot work, each naming its field and
// value, joined into one error; it returns nil for a usable Config.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("adaptive: Config."+format, args...))
	}
	if c.InitialLimit < 0 {
		bad("InitialLimit must not be negative (0 means the default %d), got %d", defaultInitialLimit, c.InitialLimit)
	}
	if c.MinLimit < 0 {
		bad("MinLimit must not be negative (0 means the default %d), got %d", defaultMinLimit, c.MinLimit)
	}
	if c.MaxLimit < 0 {
		bad("MaxLimit must not be negative (0 means the default %d), got %d", defaultMaxLimit, c.MaxLimit)
	}
	if d := c.withDefaults(); len(errs) == 0 {
		switch {
		case d.MinLimit > d.MaxLimit:
			bad("MinLimit (%d) must not be above Config.MaxLimit (%d), defaults included", d.MinLimit, d.MaxLimit)
		case d.InitialLimit < d.MinLimit || d.InitialLimit > d.MaxLimit:
			bad("InitialLimit (%d) must lie between Config.MinLimit (%d) and Config.MaxLimit (%d), defaults included",
				d.InitialLimit, d.MinLimit, d.MaxLimit)
		}
	}
	if math.IsNaN(c.Quantile) || c.Quantile < 0 || c.Quantile >= 1 {
		bad("Quantile must lie in (0, 1) (0 means the default %v), got %v", defaultQuantile, c.Quantile)
	}
	if c.Tolerance != 0 && !(c.Tolerance > 1 && !math.IsInf(c.Tolerance, 1)) {
		bad("Tolerance must be a finite number above 1 (0 means the default %v), got %v", defaultTolerance, c.Tolerance)
	}
	if c.Interval < 0 {
		bad("Interval must not be negative (0 means the default %v), got %v", defaultInterval, c.Interval)
	}
	if c.MinSamples < 0 {
		bad("MinSamples must not be negative (0 means the default %d), got %d", defaultMinSamples, c.MinSamples)
	}
	if c.MaxQueue < 0 {
		bad("MaxQueue must not be negative (0 means no queue), got %d", c.MaxQueue)
	}
	if c.MaxWait < 0 {
		bad("MaxWait must not be negative (0 means the default %v), got %v", defaultMaxWait, c.MaxWait)
	} else if c.MaxWait != 0 && c.MaxQueue == 0 {
		bad("MaxWait is %v but Config.MaxQueue is 0: a wait applies only to a queue", c.MaxWait)
	}
	if err := c.Shares.Validate(); err != nil {
		bad("Shares: %w", err)
	}
	if err := c.Guarantees.Validate(c.Shares); err != nil {
		bad("Guarantees: %w", err)
	}
	if math.IsNaN(c.TenantShare) || c.TenantShare < 0 || c.TenantShare > 1 {
		bad("TenantShare must lie in [0, 1] (0 means 1: no bound per tenant), got %v", c.TenantShare)
	}
	return errors.Join(errs...)
}

// withDefaults returns c with every zero field replaced by its default.
// A default InitialLimit outside the limits set is brought inside them.
func (c Config) withDefaults() Config {
	if c.MinLimit == 0 {
		c.MinLimit = defaultMinLimit
	}
	if c.MaxLimit == 0 {
		c.MaxLimit = defaultMaxLimit
	}
	if c.InitialLimit == 0 {
		c.InitialLimit = min(max(defaultInitialLimit, c.MinLimit), c.MaxLimit)
	}
	if c.Quantile == 0 {
		c.Quantile = defaultQuantile
	}
	if c.Tolerance == 0 {
		c.Tolerance = defaultTolerance
	}
	if c.Interval == 0 {
		c.Interval = defaultInterval
	}
	if c.MinSamples == 0 {
		c.MinSamples = defaultMinSamples
	}
	if c.MaxQueue > 0 && c.MaxWait == 0 {
		c.MaxWait = defaultMaxWait
	}
	return c
}

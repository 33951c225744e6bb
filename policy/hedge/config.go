package hedge

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/resilience-go/pipeline/budget"
	"github.com/resilience-go/pipeline/internal/hedgerule"
	"github.com/resilience-go/pipeline/latency"
	"github.com/resilience-go/pipeline/policy/breaker"
)

// Config configures a hedge stage. The zero value of every field means its
// default; settings that cannot work are refused by [Config.Validate] and [New]
// with an error naming the field and its value.
type Config struct {
	// Name names the stage, typically after the dependency it calls; its
	// events carry it (pipeline.Source.Name). Empty means unnamed.
	Name string
	// Estimator measures the attempts that pass through the stage and supplies
	// the hedge delay. Share one among the stages that call the same dependency.
	// Nil means a new estimator with latency's default 30 s window on Clock.
	Estimator *latency.Estimator
	// Quantile of the estimator's latency that sets the hedge delay. Zero means
	// 0.95; otherwise it must lie in (0, 1].
	Quantile float64
	// MinDelay is the shortest hedge delay. Zero means 10 ms;
	// it must not be negative.
	MinDelay time.Duration
	// MinSamples is how many samples the estimator must hold before the stage
	// hedges. Zero means 20; it must not be negative.
	MinSamples int
	// MaxAttempts is the most attempts of one call in flight at once, the first
	// included; each hedge after the first waits another delay. Zero means
	// 2; otherwise it must be at least 2.
	MaxAttempts int
	// MaxExtra bounds the hedges the stage sends, as a fraction of the attempts
	// it arms: each armed attempt earns MaxExtra of a hedge, each hedge spends
	// one, and at most MaxAttempts-1 (one attempt's worth) can be saved up. So
	// that hedges add at most MaxExtra to the load however the latency moves,
	// even while the estimator lags a dependency slowing under load, when a
	// quantile alone would hedge far more than 1 - Quantile of the attempts.
	// Zero means 1 - Quantile (0.05 at the default), or 0.01 if
	// that is less; otherwise it must lie in (0, MaxAttempts-1], and
	// MaxAttempts-1 lets every armed attempt send all its hedges.
	MaxExtra float64
	// Breaker, if set, is the breaker of the same dependency: a hedge is sent
	// only while it is Closed and its Pressure is below 0.5 (half of the way
	// to a trip point), unless it is in shadow mode (breaker.Config.Shadow),
	// which must change nothing. Nil means no such condition.
	Breaker *breaker.Breaker
	// Budget pays for hedges: each hedge takes one token, and a hedge the budget
	// cannot pay for is not sent. Share the retry stage's budget. Nil means
	// unlimited.
	Budget *budget.Budget
	// Repeatable declares every call through the stage safe to send more than
	// once. When false (the default), only calls whose context was marked with
	// [Repeatable] are hedged.
	Repeatable bool
	// Clock times the hedge delay, and the estimator the stage makes when
	// Estimator is nil. Nil means real time.
	Clock clockwork.Clock
}

// Validate reports every setting that cannot work, each naming its field and
// value, joined into one error; it returns nil for a usable Config.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("hedge: Config."+format, args...))
	}
	if math.IsNaN(c.Quantile) || c.Quantile < 0 || c.Quantile > 1 {
		bad("Quantile must lie in (0, 1] (0 means the default %v), got %v", hedgerule.DefaultQuantile, c.Quantile)
	}
	if c.MinDelay < 0 {
		bad("MinDelay must not be negative, got %v", c.MinDelay)
	}
	if c.MinSamples < 0 {
		bad("MinSamples must not be negative, got %d", c.MinSamples)
	}
	if c.MaxAttempts < 0 || c.MaxAttempts == 1 {
		bad("MaxAttempts must be at least 2 (0 means the default %d), got %d", hedgerule.DefaultMaxAttempts, c.MaxAttempts)
	}
	if most := float64(max(c.MaxAttempts, hedgerule.DefaultMaxAttempts) - 1); math.IsNaN(c.MaxExtra) || c.MaxExtra < 0 || c.MaxExtra > most {
		bad("MaxExtra must lie in (0, MaxAttempts-1 = %v] (0 means 1 - Quantile), got %v", most, c.MaxExtra)
	}
	return errors.Join(errs...)
}

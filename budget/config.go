package budget

import (
	"fmt"
	"math"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/resilience-go/pipeline/criticality"
)

// Defaults used for the zero values of [Config]'s fields.
const (
	// defaultDepositPerSuccess is the fraction of a token each successful attempt
	// puts back: ten successes pay for one retry.
	defaultDepositPerSuccess = 0.1
	// defaultRefillPerSecond is the number of tokens time adds per second.
	defaultRefillPerSecond = 3.0
	// defaultHorizon is how many seconds of refill the bucket can hold: the
	// default capacity is max(RefillPerSecond x Horizon, 1) tokens, 30 with the
	// default refill.
	defaultHorizon = 10 * time.Second
	// MaxCapacity is the largest capacity a budget accepts, given or derived.
	MaxCapacity = 1e9
)

// Config configures a [Budget]. The zero value of every field means its default.
// Settings that cannot work are refused by [Config.Validate] and [New] with an
// error naming the field and its value.
type Config struct {
	// Name names the budget, typically after the dependency it serves, for
	// telemetry and health endpoints (see Name). Empty means unnamed.
	Name string
	// DepositPerSuccess is the part of a token each successful attempt deposits,
	// a fraction in (0, 1]. Zero means 0.1.
	DepositPerSuccess float64
	// RefillPerSecond is how many tokens time adds per second, a positive
	// number. Zero means 3.
	RefillPerSecond float64
	// Horizon sets the capacity as seconds of refill: the bucket holds at most
	// max(RefillPerSecond x Horizon, 1) tokens. Zero means 10 s. Set Horizon or
	// Capacity, not both.
	Horizon time.Duration
	// Capacity is the most tokens the bucket holds, at least 1 so that one retry
	// can ever be paid. Zero means max(RefillPerSecond x Horizon, 1) (30 with the
	// defaults). Set Horizon or Capacity, not both.
	Capacity float64
	// Shares is how much of the capacity the retries and hedges of each
	// level (criticality.Level) may spend: a withdrawal of level l is paid
	// only while the tokens spent are fewer than l's share of the capacity
	// (criticality.Shares), so that as the budget runs low Sheddable
	// retries are the first refused. By default Sheddable ones may spend
	// three quarters of it (30 tokens: the last 7.5 are kept for the
	// others), the others all of it; a refused withdrawal makes the levels
	// below it give way for a second, as a bulkhead's refusal does. A full
	// budget pays any level.
	Shares criticality.Shares
	// Clock drives the refill. Nil means real time.
	Clock clockwork.Clock
}

// Validate reports the first setting that cannot work, naming the field and its
// value, or nil. Zero values are valid: they mean the defaults.
func (c Config) Validate() error {
	switch {
	case !(c.DepositPerSuccess >= 0 && c.DepositPerSuccess <= 1):
		return fmt.Errorf("budget: Config.DepositPerSuccess must be a fraction in 0..1, got %v", c.DepositPerSuccess)
	case !(c.RefillPerSecond >= 0) || math.IsInf(c.RefillPerSecond, 1):
		return fmt.Errorf("budget: Config.RefillPerSecond must be a finite number >= 0, got %v", c.RefillPerSecond)
	case c.Horizon < 0:
		return fmt.Errorf("budget: Config.Horizon must not be negative, got %v", c.Horizon)
	case !(c.Capacity >= 0) || math.IsInf(c.Capacity, 1):
		return fmt.Errorf("budget: Config.Capacity must be a finite number >= 0, got %v", c.Capacity)
	case c.Capacity > 0 && c.Capacity < 1:
		return fmt.Errorf("budget: Config.Capacity must be at least 1 (one retry), got %v", c.Capacity)
	case c.Capacity > MaxCapacity:
		return fmt.Errorf("budget: Config.Capacity must be at most %v, got %v", float64(MaxCapacity), c.Capacity)
	case c.Capacity > 0 && c.Horizon > 0:
		return fmt.Errorf("budget: set Config.Capacity (%v) or Config.Horizon (%v), not both", c.Capacity, c.Horizon)
	}
	if err := c.Shares.Validate(); err != nil {
		return fmt.Errorf("budget: Config.Shares: %w", err)
	}
	if d := c.withDefaults(); d.Capacity > MaxCapacity {
		return fmt.Errorf("budget: Config.RefillPerSecond (%v) x Config.Horizon (%v) gives a capacity of %v tokens, more than %v",
			d.RefillPerSecond, d.Horizon, d.Capacity, float64(MaxCapacity))
	}
	return nil
}

// withDefaults returns c with every zero field replaced by its default.
func (c Config) withDefaults() Config {
	if c.DepositPerSuccess == 0 {
		c.DepositPerSuccess = defaultDepositPerSuccess
	}
	if c.RefillPerSecond == 0 {
		c.RefillPerSecond = defaultRefillPerSecond
	}
	if c.Horizon == 0 {
		c.Horizon = defaultHorizon
	}
	if c.Capacity == 0 {
		c.Capacity = max(c.RefillPerSecond*c.Horizon.Seconds(), 1)
	}
	return c
}

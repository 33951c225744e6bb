package ratelimit

import (
	"fmt"
	"math"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/resilience-go/pipeline/criticality"
)

// Defaults and limits of [Config]'s fields.
const (
	// DefaultBurstWindow sets the default burst: a zero Config.Burst means the
	// tokens Rate earns in this long, rounded up, and at least 1. Calls that
	// arrive at a steady rate still bunch by a few milliseconds (scheduling,
	// network, timers); a tenth of a second of tokens absorbs that jitter while
	// holding any one second to 1.1 times the rate.
	DefaultBurstWindow = 100 * time.Millisecond
	// maxRate is the highest rate a limiter can time: one call a nanosecond.
	maxRate = 1e9
)

// Config configures a rate [Limiter]. The zero value of every field but Rate
// means its default. Settings that cannot work are refused by [Config.Validate]
// and [New] with an error naming the field and its value.
type Config struct {
	// Name names the limiter, typically after the dependency it protects; its
	// stop errors and events carry it (pipeline.StopError.Name,
	// pipeline.Source.Name). Empty means unnamed.
	Name string
	// Rate is how many calls a second the limiter admits on average. It has no
	// default: it must be positive, finite and at most 1e9 (one call a
	// nanosecond).
	Rate float64
	// Burst is how many calls the limiter admits at once after a quiet spell:
	// the size of its bucket. A new limiter starts full. Zero means the tokens
	// Rate earns in [DefaultBurstWindow] (100 ms), rounded up, and at least 1;
	// it must not be negative.
	Burst int
	// MaxWait is how long a call may wait for a token. Zero (the default)
	// means a call that finds no token is refused at once, with the time
	// until the next token as its retry-after hint; it must not be negative. A
	// call never waits past its context's deadline: one whose token would come
	// later is refused at once.
	MaxWait time.Duration
	// Shares is how much of the bucket the calls of each level
	// (criticality.From of the call's context) may take through the stage
	// (criticality.Shares): by default Sheddable calls three quarters of
	// Burst, rounded up, so that they are refused, or wait, while fewer
	// tokens are left than the quarter kept for the others; the others may
	// take all of it. With a Burst of 1 every level may take the one token.
	Shares criticality.Shares
	// Clock is the clock the limiter's tokens accrue on and its waits are
	// timed by. Nil means real time. A limiter whose first call reads a
	// time before New's is timed from that call, so a limiter built on one
	// goroutine's clock (outside a synctest bubble) runs on its callers'
	// (inside it).
	Clock clockwork.Clock
}

// Validate reports the first impossible value in c, naming the field, or nil.
func (c Config) Validate() error {
	if math.IsNaN(c.Rate) || c.Rate <= 0 || c.Rate > maxRate {
		return fmt.Errorf("ratelimit: Config.Rate must be positive and at most %g calls a second, got %v", float64(maxRate), c.Rate)
	}
	if c.Burst < 0 {
		return fmt.Errorf("ratelimit: Config.Burst must not be negative (0 means the tokens of %v), got %d", DefaultBurstWindow, c.Burst)
	}
	if interval := intervalOf(c.Rate); int64(c.Burst) > math.MaxInt64/4/interval {
		return fmt.Errorf("ratelimit: Config.Burst %d at Config.Rate %v would take longer than any clock can measure to earn", c.Burst, c.Rate)
	}
	if c.MaxWait < 0 {
		return fmt.Errorf("ratelimit: Config.MaxWait must not be negative (0 means refuse at once), got %v", c.MaxWait)
	}
	if err := c.Shares.Validate(); err != nil {
		return fmt.Errorf("ratelimit: Config.Shares: %w", err)
	}
	return nil
}

// burst is c.Burst with its default.
func (c Config) burst() int {
	if c.Burst > 0 {
		return c.Burst
	}
	return max(1, int(math.Ceil(c.Rate*DefaultBurstWindow.Seconds())))
}

// intervalOf is the time one token takes to earn at rate, rounded up to the
// nanosecond so that rounding never admits more than rate.
func intervalOf(rate float64) int64 {
	return max(1, int64(math.Ceil(float64(time.Second)/rate)))
}

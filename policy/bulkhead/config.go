package bulkhead

import (
	"fmt"
	"math"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/resilience-go/pipeline/criticality"
)

// defaultMaxWait is how long a queued call waits for a slot when Config.MaxWait
// is 0 and the bulkhead has a queue: long enough for a queue of a few calls to
// drain through slots held for the tens of milliseconds a remote call takes,
// short enough to leave a caller with a deadline of a few seconds time to do
// something else.
const defaultMaxWait = time.Second

// Config configures a [Bulkhead]. The zero value of every field but
// MaxConcurrent means its default. Settings that cannot work are refused by
// [Config.Validate] and [New] with an error naming the field and its value.
type Config struct {
	// Name names the bulkhead, typically after the dependency it protects;
	// its stop errors and events carry it (pipeline.StopError.Name,
	// pipeline.Source.Name). Empty means unnamed.
	Name string
	// MaxConcurrent is how many calls may be inside the bulkhead at once. It
	// has no default, since only you know what the dependency (or your own
	// process) can take: it must be positive.
	MaxConcurrent int
	// MaxQueue is how many calls may wait for a slot when all are taken; one
	// more is refused at once. Zero (the default) means no queue: a call that
	// finds every slot taken is refused at once. It must not be negative.
	MaxQueue int
	// MaxWait is how long a queued call waits for a slot before it is
	// refused; it also gives up when its context ends. Zero means
	// 1 s. It must not be negative, and may be set only
	// with a queue (MaxQueue above 0).
	MaxWait time.Duration
	// Shares is how much of MaxConcurrent the calls of each level
	// (criticality.From of the call's context) may fill: by default
	// Sheddable calls three quarters of it, the others all of it (see
	// criticality.Shares). The queue serves higher levels first, and a
	// full queue gives the place of its newest lowest-level call to an
	// arrival of a higher level, refusing that call.
	Shares criticality.Shares
	// Guarantees is how much of MaxConcurrent is kept for Default and
	// Sheddable calls, so that a flood of higher-level calls cannot starve
	// them (see criticality.Guarantees; the zero value keeps nothing). A
	// level holding fewer slots than its guarantee (its fraction of the
	// limit, rounded down) takes any free slot, beyond its share and ahead
	// of the higher levels in the queue: the one exception to a higher
	// level's precedence. While a level leaves its guarantee unused the
	// other levels may fill it; once a call of that level finds no free
	// slot, the slots the level holds fewer than its guarantee are kept
	// from the other levels for a second (giveway's Recovery) after each
	// such call, so the borrowed slots come back to it as they are given
	// back: to its queued calls first, or, without a queue, to its next
	// calls. MaxConcurrent stays the bound. Each guarantee must lie within
	// its level's share (Shares), and the two must leave part of the limit
	// unkept. Every call must then be given back with the context it was
	// taken with (see [Bulkhead.Release]).
	Guarantees criticality.Guarantees
	// TenantShare is the fraction of the slots its level may fill (its
	// share of the limit, as Shares computes it) that the calls of one
	// tenant (criticality.Tenant of the call's context) may hold at once:
	// a call with a tenant is admitted only while its tenant holds fewer
	// than TenantShare × that level's slots, rounded down (to a millionth
	// of a slot, so that 0.7 of 10 is 7), and at least 1. So with 0.5 and
	// two tenants, neither can hold more than half of a level's slots, and
	// each can always take its half. A tenant's slots are counted across
	// levels, as Shares counts all the slots taken, and while the levels
	// give way (see Shares) the bound is taken of the slots the level may
	// fill at that moment. Calls without a tenant are never bounded by
	// it. A call refused only for its tenant's bound waits in the queue
	// like any other, without holding up the calls behind it, and does not
	// make the lower levels give way: its level was not short. Zero (the
	// default) and 1 bound no tenant and count nothing; otherwise it must
	// lie in (0, 1). Every call must then be given back with the context
	// it was taken with (see [Bulkhead.Release]).
	TenantShare float64
	// Clock times MaxWait. Nil means real time.
	Clock clockwork.Clock
}

// Validate reports the first impossible value in c, naming the field, or nil.
func (c Config) Validate() error {
	if c.MaxConcurrent <= 0 {
		return fmt.Errorf("bulkhead: Config.MaxConcurrent must be positive, got %d", c.MaxConcurrent)
	}
	if c.MaxQueue < 0 {
		return fmt.Errorf("bulkhead: Config.MaxQueue must not be negative (0 means no queue), got %d", c.MaxQueue)
	}
	if c.MaxWait < 0 {
		return fmt.Errorf("bulkhead: Config.MaxWait must not be negative (0 means the default %v), got %v", defaultMaxWait, c.MaxWait)
	}
	if c.MaxWait != 0 && c.MaxQueue == 0 {
		return fmt.Errorf("bulkhead: Config.MaxWait is %v but Config.MaxQueue is 0: a wait applies only to a queue", c.MaxWait)
	}
	if err := c.Shares.Validate(); err != nil {
		return fmt.Errorf("bulkhead: Config.Shares: %w", err)
	}
	if err := c.Guarantees.Validate(c.Shares); err != nil {
		return fmt.Errorf("bulkhead: Config.Guarantees: %w", err)
	}
	if math.IsNaN(c.TenantShare) || c.TenantShare < 0 || c.TenantShare > 1 {
		return fmt.Errorf("bulkhead: Config.TenantShare must lie in [0, 1] (0 means 1: no bound per tenant), got %v", c.TenantShare)
	}
	return nil
}

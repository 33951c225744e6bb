package budget

import (
	"math"
	"sync"
	"time"

	"github.com/resilience-go/pipeline/criticality"
	"github.com/resilience-go/pipeline/internal/clock"
	"github.com/resilience-go/pipeline/internal/giveway"
)

// unit is the number of units one token is made of. The balance is kept as a
// whole number of units so that ten deposits of 0.1 token make exactly one token,
// and refill accrues one unit per nanosecond for each token per second.
const unit = 1_000_000_000

// Budget is a token bucket that pays for retries and hedges. Build one with [New]
// per dependency and share it among every pipeline that calls that dependency.
//
// A new Budget starts full. [Budget.Deposit] adds a fraction of a token for each
// successful attempt, time adds tokens at a fixed rate, and [Budget.Withdraw]
// takes one whole token for each retry or hedge; [Budget.Refund] returns it if
// the retry was refused by our own stage before it reached the dependency. The
// balance never goes below
// zero and never above the capacity. It is kept in billionths of a token, which
// is the precision of every figure the Budget reports.
//
// A nil *Budget means "unlimited": its methods work and every withdrawal
// succeeds. A zero Budget (var b Budget, &Budget{}) is not usable: build one
// with [New]. Every method of a non-nil Budget that New did not build panics
// with a message naming New, before taking any lock. A Budget is safe for
// concurrent use.
type Budget struct {
	// Immutable after New, which always sets capacity: a Budget with a zero
	// capacity was not built by New. Each method checks it before it takes
	// mu.
	deposit  int64   // units per successful attempt
	rate     float64 // units per nanosecond, which is tokens per second
	capacity int64   // most units the bucket holds, >= unit
	// needs is the balance, in units, a withdrawal of each level needs while
	// no level gives way: one token above what its share keeps for the
	// levels above it, at most the capacity.
	needs [criticality.Levels]int64
	// elapsed reads Config.Clock (real time through the monotonic clock
	// alone) as the time since New; a first reading behind New's, from
	// another time domain (a synctest bubble), moves its epoch back
	// (clock.Elapsed).
	elapsed clock.Elapsed
	name    string

	mu     sync.Mutex    // guards tokens, frac, last and gate
	tokens int64         // balance in units at last, in [0, capacity]
	frac   float64       // refill earned by last beyond tokens, in [0, 1) units
	last   time.Duration // when the refill was last credited, on elapsed
	gate   giveway.Gate  // the levels that give way after a refusal of a higher one
}

// notBuilt is the panic of every use of a non-nil Budget that [New] did not
// build.
const notBuilt = "budget: Budget used without budget.New (its zero value is not usable)"

// New returns a full budget configured by cfg, or an error naming the first
// setting that cannot work.
func New(cfg Config) (*Budget, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	capacity := int64(math.Round(cfg.Capacity * unit))
	b := &Budget{
		deposit:  int64(math.Round(cfg.DepositPerSuccess * unit)),
		rate:     cfg.RefillPerSecond,
		capacity: capacity,
		name:     cfg.Name,
		tokens:   capacity,
	}
	for i := range b.needs {
		b.needs[i] = b.need(cfg.Shares.Of(criticality.Level(i + 1)))
	}
	b.gate = giveway.New(cfg.Shares)
	b.elapsed.Clock = cfg.Clock
	b.elapsed.Start()
	return b, nil
}

// now reads the budget's clock, as the time since New. On real time it reads
// the monotonic clock alone, which costs half of time.Now: a retry and a hedge
// each withdraw once.
func (b *Budget) now() time.Duration { return b.elapsed.Read() }

// Name returns the budget's name (Config.Name).
func (b *Budget) Name() string {
	if b == nil {
		return ""
	}
	return b.name
}

// Deposit records one successful attempt: it adds DepositPerSuccess tokens, up to
// the capacity. On a nil Budget it does nothing.
func (b *Budget) Deposit() {
	if b == nil {
		return
	}
	if b.capacity == 0 {
		panic(notBuilt)
	}
	// Refill and deposits only ever add, and both stop at the capacity, so their
	// order does not change the balance: the refill is left to the next call that
	// needs it, which keeps the success path free of a clock read.
	b.mu.Lock()
	b.tokens = min(b.tokens+b.deposit, b.capacity)
	b.mu.Unlock()
}

// Withdraw takes one token for a retry or a hedge of level l (see
// Config.Shares; a level that does not exist is Default). It returns ok
// true if the budget held the token and l's share allowed it. Otherwise it
// takes nothing and returns how long until it would, if nothing else
// changes: the retry-after hint of the refusal, always positive. On a nil
// Budget it always succeeds.
func (b *Budget) Withdraw(l criticality.Level) (wait time.Duration, ok bool) {
	if b == nil {
		return 0, true
	}
	if b.capacity == 0 {
		panic(notBuilt)
	}
	if !l.Valid() {
		l = criticality.Default
	}
	now := b.now()
	b.mu.Lock()
	b.refill(now)
	need := b.needs[l-1]
	if b.gate.Squeezed() {
		need = b.need(b.gate.Share(l, now))
	}
	if b.tokens >= need {
		b.tokens -= unit
		b.mu.Unlock()
		return 0, true
	}
	b.gate.Refused(l, now)
	wait = b.until(need)
	b.mu.Unlock()
	return wait, false
}

// need is the balance, in units, a withdrawal needs when its level may
// spend share of the capacity: one token above what the share keeps, at
// most the capacity (a full budget pays any level).
func (b *Budget) need(share float64) int64 {
	spend := int64(math.Round(share * float64(b.capacity)))
	return min(b.capacity-spend+unit, b.capacity)
}

// Refund gives back the token a withdrawal took for a retry or hedge that never
// reached the dependency, because one of our own stages refused it (an open
// breaker), so that such refusals are never charged. The balance stays at most
// the capacity. On a nil Budget it does nothing.
func (b *Budget) Refund() {
	if b == nil {
		return
	}
	if b.capacity == 0 {
		panic(notBuilt)
	}
	b.mu.Lock()
	b.tokens = min(b.tokens+unit, b.capacity)
	b.mu.Unlock()
}

// Tokens returns the current balance, in [0, Capacity]. Reading it changes
// nothing. On a nil Budget it returns +Inf.
func (b *Budget) Tokens() float64 {
	if b == nil {
		return math.Inf(1)
	}
	if b.capacity == 0 {
		panic(notBuilt)
	}
	now := b.now()
	b.mu.Lock()
	units := b.level(now)
	b.mu.Unlock()
	return float64(units) / unit
}

// Capacity returns the most tokens the budget holds. On a nil Budget it returns
// +Inf.
func (b *Budget) Capacity() float64 {
	if b == nil {
		return math.Inf(1)
	}
	if b.capacity == 0 {
		panic(notBuilt)
	}
	return float64(b.capacity) / unit
}

// Utilization returns the fraction of the capacity that is spent, in [0, 1]: 0
// for a full bucket (nothing is being retried), 1 for an empty one (retries are
// being refused). On a nil Budget it returns 0.
func (b *Budget) Utilization() float64 {
	if b == nil {
		return 0
	}
	if b.capacity == 0 {
		panic(notBuilt)
	}
	now := b.now()
	b.mu.Lock()
	units := b.level(now)
	b.mu.Unlock()
	return float64(b.capacity-units) / float64(b.capacity)
}

// accrued returns the whole units refill adds over elapsed, on top of the
// carried fraction of a unit, at most the capacity. b.mu must be held.
func (b *Budget) accrued(elapsed time.Duration) int64 {
	if elapsed <= 0 {
		return 0
	}
	u := float64(elapsed)*b.rate + b.frac
	if u >= float64(b.capacity) {
		return b.capacity
	}
	return int64(u)
}

// level returns the balance at now without changing the state. b.mu must be held.
// A now before last (a clock read taken just before another caller's, or a clock
// that went back) adds nothing.
func (b *Budget) level(now time.Duration) int64 {
	return min(b.tokens+b.accrued(now-b.last), b.capacity)
}

// refill credits the refill up to now. b.mu must be held. The fraction of a unit
// that does not make a whole one is carried to the next refill, so frequent calls
// lose nothing to rounding.
func (b *Budget) refill(now time.Duration) {
	elapsed := now - b.last
	if elapsed <= 0 {
		return
	}
	u := float64(elapsed)*b.rate + b.frac
	if u >= float64(b.capacity-b.tokens) {
		b.tokens, b.frac = b.capacity, 0
	} else {
		gained := int64(u)
		b.tokens += gained
		b.frac = u - float64(gained)
	}
	b.last = now
}

// until returns how long after the last refill the balance first holds
// target units. b.mu must be held, refill(now) done (so last is now, or later
// if now was a stale read) and the balance below target.
func (b *Budget) until(target int64) time.Duration {
	need := target - b.tokens
	ns := math.Ceil((float64(need) - b.frac) / b.rate)
	if ns >= math.MaxInt64/2 {
		return math.MaxInt64
	}
	w := time.Duration(ns)
	// Rounding can leave the estimate a nanosecond off; adjust until it is the
	// shortest wait after which refill, by the same arithmetic, pays for the token.
	for w > 1 && b.accrued(w-1) >= need {
		w--
	}
	for b.accrued(w) < need {
		w++
	}
	return w
}

package budget

import (
	"math"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline/criticality"
	"github.com/resilience-go/pipeline/internal/testcheck"
)

func newFake(t *testing.T, cfg Config) (*Budget, *clockwork.FakeClock) {
	t.Helper()
	clock := clockwork.NewFakeClock()
	cfg.Clock = clock
	b, err := New(cfg)
	require.NoError(t, err)
	return b, clock
}

// drain withdraws every whole token and returns how many it took.
func drain(b *Budget) int {
	n := 0
	for {
		if _, ok := b.Withdraw(criticality.Default); !ok {
			return n
		}
		n++
	}
}

func TestWithdrawTakesOneWholeTokenUntilEmpty(t *testing.T) {
	b, _ := newFake(t, Config{})
	assert.Equal(t, 30, drain(b), "a full default budget pays for 30 retries")
	assert.InDelta(t, 0, b.Tokens(), 1e-12)
	assert.InDelta(t, 1, b.Utilization(), 1e-12)

	wait, ok := b.Withdraw(criticality.Default)
	assert.False(t, ok)
	assert.Equal(t, time.Second/3+1, wait, "one token at 3/s takes a third of a second, rounded up")
}

func TestRefusalWaitIsHonest(t *testing.T) {
	b, clock := newFake(t, Config{})
	drain(b)
	b.Deposit() // 0.1 token
	b.Deposit() // 0.2 token
	wait, ok := b.Withdraw(criticality.Default)
	require.False(t, ok)
	assert.Equal(t, 266666667*time.Nanosecond, wait, "0.8 token at 3/s, rounded up to the nanosecond")

	clock.Advance(wait - time.Nanosecond)
	_, ok = b.Withdraw(criticality.Default)
	assert.False(t, ok, "one nanosecond early is still too early")
	clock.Advance(time.Nanosecond)
	_, ok = b.Withdraw(criticality.Default)
	assert.True(t, ok, "after the promised wait a token is there")
}

func TestDepositsPayForRetries(t *testing.T) {
	b, _ := newFake(t, Config{})
	drain(b)
	for range 9 {
		b.Deposit()
	}
	_, ok := b.Withdraw(criticality.Default)
	assert.False(t, ok, "nine successes are not enough for one retry")
	b.Deposit()
	_, ok = b.Withdraw(criticality.Default)
	assert.True(t, ok, "ten successes pay for one retry")
}

func TestRefillIsLazyAndCapped(t *testing.T) {
	b, clock := newFake(t, Config{})
	drain(b)
	clock.Advance(2 * time.Second)
	assert.InDelta(t, 6, b.Tokens(), 1e-9)
	assert.InDelta(t, 0.8, b.Utilization(), 1e-9)
	clock.Advance(time.Hour)
	assert.Equal(t, 30.0, b.Tokens(), "never above capacity")
	for range 100 {
		b.Deposit()
	}
	assert.Equal(t, 30.0, b.Tokens(), "deposits are capped too")
	assert.Equal(t, 0.0, b.Utilization())
}

func TestReadingDoesNotChangeTheBalance(t *testing.T) {
	b, clock := newFake(t, Config{})
	drain(b)
	clock.Advance(time.Second)
	for range 3 {
		assert.InDelta(t, 3, b.Tokens(), 1e-9)
	}
	assert.Equal(t, 3, drain(b))
}

func TestClockGoingBackRefillsNothing(t *testing.T) {
	clock := clockwork.NewFakeClock()
	b, err := New(Config{Clock: clock})
	require.NoError(t, err)
	drain(b)
	b.last += time.Second // as if another caller had read a later time
	clock.Advance(500 * time.Millisecond)
	assert.Equal(t, 0.0, b.Tokens())
	_, ok := b.Withdraw(criticality.Default)
	assert.False(t, ok)
}

func TestTinyRefillWaitDoesNotOverflow(t *testing.T) {
	b, _ := newFake(t, Config{RefillPerSecond: 1e-12, Capacity: 1})
	drain(b)
	wait, ok := b.Withdraw(criticality.Default)
	assert.False(t, ok)
	assert.Equal(t, time.Duration(math.MaxInt64), wait)
}

func TestNilBudgetIsUnlimited(t *testing.T) {
	var b *Budget
	for range 1000 {
		wait, ok := b.Withdraw(criticality.Default)
		require.True(t, ok)
		require.Zero(t, wait)
	}
	b.Deposit()
	assert.True(t, math.IsInf(b.Tokens(), 1))
	assert.True(t, math.IsInf(b.Capacity(), 1))
	assert.Equal(t, 0.0, b.Utilization())
}

func TestRefundReturnsTheToken(t *testing.T) {
	b, _ := newFake(t, Config{})
	_, ok := b.Withdraw(criticality.Default)
	require.True(t, ok)
	assert.InDelta(t, 29, b.Tokens(), 1e-12)
	b.Refund()
	assert.InDelta(t, 30, b.Tokens(), 1e-12)
	b.Refund()
	assert.InDelta(t, 30, b.Tokens(), 1e-12, "never above capacity")

	var unlimited *Budget
	unlimited.Refund()
}

// zeroPanic is what every method of a non-nil Budget not built by New panics with.
const zeroPanic = "budget: Budget used without budget.New (its zero value is not usable)"

// TestZeroBudgetPanicsNamingNew: a Budget declared instead of built by New
// fails at first use, whatever the first use is, with a panic naming New, rather
// than paying for nothing, or failing on a nil clock. Only a nil *Budget means
// unlimited (TestNilBudgetIsUnlimited).
func TestZeroBudgetPanicsNamingNew(t *testing.T) {
	for name, use := range map[string]func(b *Budget){
		"Deposit":     func(b *Budget) { b.Deposit() },
		"Withdraw":    func(b *Budget) { b.Withdraw(criticality.Default) },
		"Refund":      func(b *Budget) { b.Refund() },
		"Tokens":      func(b *Budget) { b.Tokens() },
		"Capacity":    func(b *Budget) { b.Capacity() },
		"Utilization": func(b *Budget) { b.Utilization() },
	} {
		var zero Budget
		assert.PanicsWithValue(t, zeroPanic, func() { use(&zero) }, name)
		assert.True(t, zero.mu.TryLock(), "%s: the panic left the lock held", name)
		assert.PanicsWithValue(t, zeroPanic, func() { use(&Budget{}) }, name)
	}
}

// TestZeroBudgetPanicLeavesNothingLocked: the panic comes before the lock is
// taken, so a caller that recovers it leaves the budget as it found it, and a
// use from another goroutine fails the same way at once instead of blocking.
func TestZeroBudgetPanicLeavesNothingLocked(t *testing.T) {
	b := &Budget{}
	assert.PanicsWithValue(t, zeroPanic, func() { b.Withdraw(criticality.Default) })
	assert.Equal(t, zeroPanic, testcheck.PanicElsewhere(t, func() { b.Tokens() }))
	assert.Equal(t, zeroPanic, testcheck.PanicElsewhere(t, func() { b.Deposit() }))
}

// TestABudgetIsTimedOnItsCallersClock builds a budget on real time outside
// a synctest bubble and spends it inside one, whose time starts at
// 2000-01-01: it refills on the bubble's clock. (Timed from New's reading,
// every reading in the bubble came before the last refill, and it never
// refilled.)
func TestABudgetIsTimedOnItsCallersClock(t *testing.T) {
	b, err := New(Config{Capacity: 2, RefillPerSecond: 1})
	require.NoError(t, err)
	synctest.Test(t, func(t *testing.T) {
		assert.Equal(t, 2, drain(b))
		wait, ok := b.Withdraw(criticality.Default)
		require.False(t, ok)
		assert.Equal(t, time.Second, wait)
		time.Sleep(wait)
		_, ok = b.Withdraw(criticality.Default)
		assert.True(t, ok, "refilled on the bubble's clock")
	})
}

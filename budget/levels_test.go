package budget

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/resilience-go/pipeline/criticality"
)

func TestSheddableRetriesAreTheFirstRefusedAsTheBudgetRunsLow(t *testing.T) {
	b, clock := newFake(t, Config{Capacity: 8, RefillPerSecond: 1})
	for range 6 {
		_, ok := b.Withdraw(criticality.Sheddable)
		require.True(t, ok)
	}
	wait, ok := b.Withdraw(criticality.Sheddable)
	assert.False(t, ok, "6 of 8 tokens spent: Sheddable's three quarters")
	assert.Equal(t, time.Second, wait, "one more token refilled lets it spend again")
	_, ok = b.Withdraw(criticality.Default)
	assert.True(t, ok, "the tokens kept are the others'")
	_, ok = b.Withdraw(criticality.Critical)
	assert.True(t, ok)
	_, ok = b.Withdraw(criticality.Critical)
	assert.False(t, ok, "empty")
	clock.Advance(3 * time.Second) // 3 tokens: 5 of 8 spent
	_, ok = b.Withdraw(criticality.Sheddable)
	assert.True(t, ok, "the wait it was told was enough")
}

func TestAFullBudgetPaysAnyLevel(t *testing.T) {
	b, _ := newFake(t, Config{Capacity: 1, Shares: criticality.Shares{Sheddable: 0.1}})
	_, ok := b.Withdraw(criticality.Sheddable)
	assert.True(t, ok, "a budget of one token pays one retry of any level")
}

func TestImpossibleSharesAreRefusedNamingTheField(t *testing.T) {
	_, err := New(Config{Shares: criticality.Shares{Sheddable: 2}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Config.Shares")
	assert.Contains(t, err.Error(), "Sheddable")
}

// At one instant, a withdrawal of a higher level is paid whenever one of a
// lower level would be, and the wait a refusal tells is the shortest after
// which the same withdrawal is paid.
func TestAHigherLevelIsPaidWheneverALowerOneIs(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		capacity := float64(rapid.IntRange(1, 50).Draw(rt, "capacity"))
		d := rapid.Float64Range(0.05, 1).Draw(rt, "default")
		shares := criticality.Shares{Default: d, Sheddable: rapid.Float64Range(0.05, d).Draw(rt, "sheddable")}
		spent := rapid.IntRange(0, int(capacity)).Draw(rt, "spent")
		lower := criticality.Level(rapid.IntRange(1, 2).Draw(rt, "lower"))
		higher := criticality.Level(rapid.IntRange(int(lower)+1, 3).Draw(rt, "higher"))
		build := func() (*Budget, func(time.Duration)) {
			b, clock := newFake(t, Config{Capacity: capacity, RefillPerSecond: 1, Shares: shares})
			for range spent {
				b.Withdraw(criticality.Critical)
			}
			return b, clock.Advance
		}
		low, _ := build()
		high, _ := build()
		_, lowOK := low.Withdraw(lower)
		_, highOK := high.Withdraw(higher)
		if lowOK && !highOK {
			rt.Fatalf("%v refused with %d of %v spent while %v is paid", higher, spent, capacity, lower)
		}
		b, advance := build()
		wait, ok := b.Withdraw(lower)
		if ok {
			return
		}
		c, advanceC := build()
		advanceC(wait - time.Nanosecond)
		if _, early := c.Withdraw(lower); early {
			rt.Fatalf("paid before the wait it was told (%v)", wait)
		}
		advance(wait)
		if _, paid := b.Withdraw(lower); !paid {
			rt.Fatalf("not paid after the wait it was told (%v)", wait)
		}
	})
}

func TestARefusedCriticalRetryMakesSheddableOnesGiveWay(t *testing.T) {
	build := func() (*Budget, func(time.Duration)) {
		b, clock := newFake(t, Config{Capacity: 40, RefillPerSecond: 40})
		for range 40 {
			_, ok := b.Withdraw(criticality.Critical)
			require.True(t, ok)
		}
		return b, clock.Advance
	}
	squeezed, advanceSqueezed := build()
	_, ok := squeezed.Withdraw(criticality.Critical)
	require.False(t, ok, "empty: a critical retry is refused")
	fresh, advanceFresh := build()
	advanceSqueezed(300 * time.Millisecond) // 12 tokens back, 28 spent
	advanceFresh(300 * time.Millisecond)
	_, ok = fresh.Withdraw(criticality.Sheddable)
	assert.True(t, ok, "28 of 40 spent: within Sheddable's 30")
	_, ok = squeezed.Withdraw(criticality.Sheddable)
	assert.False(t, ok, "a critical retry was refused 300 ms ago: Sheddable ones still give way")
	_, ok = squeezed.Withdraw(criticality.Critical)
	assert.True(t, ok, "the tokens kept are the critical retries'")
	advanceSqueezed(time.Second)
	_, ok = squeezed.Withdraw(criticality.Sheddable)
	assert.True(t, ok, "a second later the share is whole again")
}

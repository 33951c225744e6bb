package bulkhead_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline/criticality"
	"github.com/resilience-go/pipeline/internal/giveway"
	"github.com/resilience-go/pipeline/policy/bulkhead"
)

var (
	critical  = criticality.With(context.Background(), criticality.Critical)
	sheddable = criticality.With(context.Background(), criticality.Sheddable)
)

// fill takes every slot of b that calls of ctx may take, and reports how
// many it took.
func fill(b *bulkhead.Bulkhead, ctx context.Context) int {
	n := 0
	for {
		if _, ok := b.TryAcquire(ctx); !ok {
			return n
		}
		n++
	}
}

func TestAGuaranteedLevelTakesAnyFreeSlot(t *testing.T) {
	b := mustNew(t, bulkhead.Config{MaxConcurrent: 10, Guarantees: criticality.Guarantees{Sheddable: 0.2}})
	for range 8 {
		_, ok := b.TryAcquire(critical)
		require.True(t, ok)
	}
	assert.Equal(t, 2, fill(b, sheddable), "its guarantee, though the limit is filled beyond Sheddable's share")
	b.Release(critical)
	b.Release(critical)
	assert.Equal(t, 0, fill(b, sheddable), "beyond its guarantee, Sheddable keeps to its share (7 of 10)")
	assert.Equal(t, 2, fill(b, critical))
}

// TestAFloodBorrowsAGuaranteeUntilItIsAskedFor: Critical calls may fill
// slots kept for Sheddable ones while none comes; once a Sheddable call
// finds none free, the slots given back go to Sheddable calls for a
// second, and then to anyone again.
func TestAFloodBorrowsAGuaranteeUntilItIsAskedFor(t *testing.T) {
	clock := clockwork.NewFakeClock()
	b := mustNew(t, bulkhead.Config{MaxConcurrent: 10, Guarantees: criticality.Guarantees{Sheddable: 0.2}, Clock: clock})
	require.Equal(t, 10, fill(b, critical), "an unused guarantee is lent")
	_, ok := b.TryAcquire(sheddable)
	require.False(t, ok, "every slot is taken")

	b.Release(critical)
	_, ok = b.TryAcquire(critical)
	assert.False(t, ok, "the slot given back is kept for Sheddable calls")
	clock.Advance(giveway.Recovery / 2)
	_, ok = b.TryAcquire(sheddable)
	assert.True(t, ok)
	b.Release(critical)
	_, ok = b.TryAcquire(critical)
	assert.False(t, ok, "Sheddable calls still hold fewer than their guarantee")
	_, ok = b.TryAcquire(sheddable)
	assert.True(t, ok)
	b.Release(critical)
	_, ok = b.TryAcquire(critical)
	assert.True(t, ok, "the guarantee is held: the rest is anyone's")

	b.Release(sheddable)
	_, ok = b.TryAcquire(critical)
	assert.False(t, ok, "Sheddable asked within the second")
	clock.Advance(giveway.Recovery)
	_, ok = b.TryAcquire(critical)
	assert.True(t, ok, "a second after Sheddable last asked, its guarantee is lent again")
}

func TestWithoutAGuaranteeAFloodStarvesALowerLevel(t *testing.T) {
	b := mustNew(t, bulkhead.Config{MaxConcurrent: 10})
	require.Equal(t, 10, fill(b, critical))
	_, ok := b.TryAcquire(sheddable)
	require.False(t, ok)
	b.Release(critical)
	_, ok = b.TryAcquire(critical)
	assert.True(t, ok, "nothing is kept: the flood takes the slot back")
}

func TestTheQueueServesAnOwedLevelFirst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := mustNew(t, bulkhead.Config{MaxConcurrent: 4, MaxQueue: 4, MaxWait: time.Minute, Guarantees: criticality.Guarantees{Sheddable: 0.25}})
		require.Equal(t, 4, fill(b, critical))
		var order []criticality.Level
		for _, ctx := range []context.Context{critical, sheddable, critical} {
			go func() {
				if b.Acquire(ctx) == nil {
					order = append(order, criticality.From(ctx))
				}
			}()
			synctest.Wait()
		}
		require.Equal(t, 3, b.Queued())
		b.Release(critical)
		synctest.Wait()
		b.Release(critical)
		synctest.Wait()
		assert.Equal(t, []criticality.Level{criticality.Sheddable, criticality.Critical}, order,
			"the Sheddable call, owed its one slot, goes before the Critical calls that came first")
		b.Release(critical)
		synctest.Wait()
		assert.Equal(t, 4, b.InFlight())
		assert.Equal(t, 0, b.Queued())
	})
}

func TestReleaseOfALevelThatHoldsNoSlotPanics(t *testing.T) {
	b := mustNew(t, bulkhead.Config{MaxConcurrent: 2, Guarantees: criticality.Guarantees{Sheddable: 0.5}})
	_, ok := b.TryAcquire(critical)
	require.True(t, ok)
	assert.PanicsWithValue(t, "bulkhead: Release for a level that holds no slot (release with the context the slot was taken with)",
		func() { b.Release(sheddable) })
	b.Release(critical)
	assert.Equal(t, 0, b.InFlight())
}

func TestGuaranteesFollowTheLimit(t *testing.T) {
	b := mustNew(t, bulkhead.Config{MaxConcurrent: 4, Guarantees: criticality.Guarantees{Default: 0.5}})
	require.Equal(t, 4, fill(b, critical), "nothing asked: everything lent")
	b.SetLimit(8)
	assert.Equal(t, 4, fill(b, context.Background()), "half of 8 for unmarked calls, read as Default")
	assert.Equal(t, 8, b.InFlight())
}

// A call queued behind a slot kept for a guarantee gets the slot once the
// hold-back ends, though no call releases one.
func TestAQueuedCallGetsASlotOnceItsHoldBackEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := mustNew(t, bulkhead.Config{MaxConcurrent: 10, MaxQueue: 1, MaxWait: 5 * time.Second, Guarantees: criticality.Guarantees{Sheddable: 0.2}})
		require.Equal(t, 10, fill(b, critical))
		_, ok := b.TryAcquire(sheddable)
		require.False(t, ok, "every slot is taken: Sheddable asks for its guarantee")
		b.Release(critical)
		start := time.Now()
		err := b.Acquire(critical) // queued: the free slot is kept for Sheddable calls for a second
		require.NoError(t, err, "no Sheddable call came for it: the slot is lent again (after %v)", time.Since(start))
		assert.Equal(t, giveway.Recovery, time.Since(start), "as the hold-back ends, not at the end of the wait")
		assert.Equal(t, 10, b.InFlight())
	})
}

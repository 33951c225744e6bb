package bulkhead_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/criticality"
	"github.com/resilience-go/pipeline/policy/bulkhead"
)

func at(l criticality.Level) context.Context { return criticality.With(context.Background(), l) }

func TestSheddableCallsLeaveTheTopOfTheLimit(t *testing.T) {
	b := mustNew(t, bulkhead.Config{MaxConcurrent: 4})
	for range 3 {
		_, ok := b.TryAcquire(at(criticality.Sheddable))
		require.True(t, ok)
	}
	_, ok := b.TryAcquire(at(criticality.Sheddable))
	assert.False(t, ok, "75% of 4 slots are Sheddable's")
	_, ok = b.TryAcquire(context.Background())
	assert.True(t, ok, "an unmarked call may fill the limit")
	_, ok = b.TryAcquire(at(criticality.Critical))
	assert.False(t, ok, "the limit is full")
}

func TestTheQueueServesHigherLevelsFirst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := mustNew(t, bulkhead.Config{MaxConcurrent: 1, MaxQueue: 3})
		_, ok := b.TryAcquire(context.Background())
		require.True(t, ok)
		order := make(chan criticality.Level, 3)
		for _, l := range []criticality.Level{criticality.Sheddable, criticality.Default, criticality.Critical} {
			go func() {
				if err := b.Acquire(at(l)); err == nil {
					order <- l
					b.Release(at(l))
				}
			}()
			synctest.Wait() // queued in this order
		}
		require.Equal(t, 3, b.Queued())
		b.Release(context.Background())
		assert.Equal(t, criticality.Critical, <-order)
		assert.Equal(t, criticality.Default, <-order)
		assert.Equal(t, criticality.Sheddable, <-order)
	})
}

func TestAFullQueueGivesThePlaceOfItsLowestCallToAHigherOne(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := mustNew(t, bulkhead.Config{MaxConcurrent: 1, MaxQueue: 1})
		_, ok := b.TryAcquire(context.Background())
		require.True(t, ok)
		shed := make(chan error, 1)
		go func() { shed <- b.Acquire(at(criticality.Sheddable)) }()
		synctest.Wait()
		var stop *pipeline.StopError
		require.ErrorAs(t, b.Acquire(at(criticality.Sheddable)), &stop, "a call of the same level takes no place")
		assert.Equal(t, 1, b.Queued())
		kept := make(chan error, 1)
		go func() { kept <- b.Acquire(at(criticality.Critical)) }()
		synctest.Wait()
		stop = nil
		require.ErrorAs(t, <-shed, &stop, "the waiting Sheddable call is refused")
		assert.Equal(t, "bulkhead", stop.Stage)
		assert.Equal(t, 1, b.Queued(), "the Critical call waits in its place")
		b.Release(context.Background())
		assert.NoError(t, <-kept)
		b.Release(context.Background())
		assert.Equal(t, 0, b.InFlight())
	})
}

// A call queued while its level gives way gets a free slot once its share
// has grown back, though no call releases one: the share grows with time,
// and the queue is served as it grows, not only at the next release.
func TestAQueuedCallGetsTheSlotItsShareGrowsBackTo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := mustNew(t, bulkhead.Config{MaxConcurrent: 4, MaxQueue: 1, MaxWait: 5 * time.Second})
		critical, unmarked := at(criticality.Critical), context.Background()
		for range 4 {
			_, ok := b.TryAcquire(critical)
			require.True(t, ok)
		}
		_, ok := b.TryAcquire(critical)
		require.False(t, ok, "full: Default gives way half of its 4 slots")
		for range 3 {
			b.Release(critical)
		}
		_, ok = b.TryAcquire(unmarked)
		require.True(t, ok, "2 of 4 in use: Default's 2")
		start := time.Now()
		err := b.Acquire(unmarked) // queued: Default may fill 2 until its share grows back
		require.NoError(t, err, "three slots free and the share grown back: the queued call gets one")
		waited := time.Since(start)
		assert.Greater(t, waited, time.Duration(0), "it did queue")
		assert.LessOrEqual(t, waited, time.Second, "within the give-way's recovery, not at the end of its wait")
		assert.Equal(t, 3, b.InFlight())
	})
}

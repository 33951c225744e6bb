package bulkhead_test

import (
	"context"
	"testing"
	"testing/synctest"

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
		assert.Equal(t, bulkhead.Kind, stop.Stage)
		assert.Equal(t, 1, b.Queued(), "the Critical call waits in its place")
		b.Release(context.Background())
		assert.NoError(t, <-kept)
		b.Release(context.Background())
		assert.Equal(t, 0, b.InFlight())
	})
}

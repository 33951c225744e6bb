package simulation

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestQueuePopsInTimeThenSchedulingOrder(t *testing.T) {
	var q queue
	r := rand.New(rand.NewPCG(3, 4))
	const n = 2000
	for i := range n {
		q.push(time.Duration(r.IntN(50))*time.Millisecond, evStart, int32(i), 0)
	}
	var prev event
	for i := range n {
		e, ok := q.pop()
		require.True(t, ok)
		if i > 0 {
			assert.True(t, prev.at < e.at || prev.at == e.at && prev.seq < e.seq, "%+v popped before %+v", prev, e)
			if prev.at == e.at {
				assert.Less(t, prev.id, e.id, "events at the same time pop in the order they were pushed")
			}
		}
		prev = e
	}
	_, ok := q.pop()
	assert.False(t, ok, "empty")
}

func TestQueueDoesNotAllocateOnceGrown(t *testing.T) {
	var q queue
	for i := range 64 {
		q.push(time.Duration(i), evEnd, 0, 0)
	}
	for range 64 {
		q.pop()
	}
	allocs := testing.AllocsPerRun(100, func() {
		for i := range 64 {
			q.push(time.Duration(64-i), evEnd, int32(i), 0)
		}
		for range 64 {
			q.pop()
		}
	})
	assert.Zero(t, allocs)
}

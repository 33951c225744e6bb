package clock_test

import (
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"

	"github.com/resilience-go/pipeline/internal/clock"
)

// TestTheFirstReadingFixesTheEpoch: time before the first reading does not
// count, and a clock set back reads as the epoch until it is past it again.
func TestTheFirstReadingFixesTheEpoch(t *testing.T) {
	fake := clockwork.NewFakeClock()
	e := clock.Elapsed{Clock: fake}
	fake.Advance(time.Hour) // before the first reading: not counted
	assert.Zero(t, e.Read())
	fake.Advance(3 * time.Second)
	assert.Equal(t, 3*time.Second, e.Read())
	fake.Advance(-10 * time.Second)
	assert.Zero(t, e.Read(), "a reading before the epoch counts as the epoch")
	fake.Advance(9 * time.Second)
	assert.Equal(t, 2*time.Second, e.Read())
}

// TestFirstReadingsRace has many goroutines read for the first time at
// once, for the race detector: one of them fixes the epoch, and all read
// from it.
func TestFirstReadingsRace(t *testing.T) {
	fake := clockwork.NewFakeClock()
	e := clock.Elapsed{Clock: fake}
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() { assert.Zero(t, e.Read()) })
	}
	wg.Wait()
	fake.Advance(time.Second)
	assert.Equal(t, time.Second, e.Read())
}

// TestRealTimeNeverRunsBackwards reads the zero Elapsed, on real time, many
// times: the readings never decrease.
func TestRealTimeNeverRunsBackwards(t *testing.T) {
	var e clock.Elapsed
	last := e.Read()
	for range 1000 {
		d := e.Read()
		assert.GreaterOrEqual(t, d, last)
		last = d
	}
}

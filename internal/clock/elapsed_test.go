package clock_test

import (
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"

	"github.com/resilience-go/pipeline/internal/clock"
)

// Time counts from Start, and a clock set back later reads as the epoch
// until it is past it again.
func TestTimeCountsFromStart(t *testing.T) {
	fake := clockwork.NewFakeClock()
	e := clock.Elapsed{Clock: fake}
	e.Start()
	fake.Advance(time.Hour)
	assert.Equal(t, time.Hour, e.Read())
	fake.Advance(-2 * time.Hour)
	assert.Zero(t, e.Read(), "a reading before the epoch counts as the epoch")
	fake.Advance(time.Hour + 2*time.Second)
	assert.Equal(t, 2*time.Second, e.Read())
}

// Without Start, the first reading fixes the epoch.
func TestWithoutStartTheFirstReadingFixesTheEpoch(t *testing.T) {
	fake := clockwork.NewFakeClock()
	e := clock.Elapsed{Clock: fake}
	fake.Advance(time.Hour)
	assert.Zero(t, e.Read())
	fake.Advance(3 * time.Second)
	assert.Equal(t, 3*time.Second, e.Read())
}

// A first reading behind the epoch moves it back: a state started on real
// time and read first in a synctest bubble, whose time starts at
// 2000-01-01, runs on the bubble's time.
func TestAFirstReadingBehindTheEpochMovesIt(t *testing.T) {
	for name, c := range map[string]clockwork.Clock{"real time": nil, "a clockwork real clock": clockwork.NewRealClock()} {
		t.Run(name, func(t *testing.T) {
			e := clock.Elapsed{Clock: c}
			e.Start()
			synctest.Test(t, func(t *testing.T) {
				assert.Zero(t, e.Read())
				time.Sleep(5 * time.Second)
				assert.Equal(t, 5*time.Second, e.Read())
				assert.Equal(t, time.Now().Add(-5*time.Second), e.Epoch())
			})
		})
	}
}

// TestFirstReadingsRace has many goroutines read for the first time at
// once, for the race detector: they settle on one epoch.
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

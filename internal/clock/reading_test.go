package clock_test

import (
	"math"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"

	"github.com/resilience-go/pipeline/internal/clock"
)

// From gives what Read would have given at the reading it is handed, on a
// fake clock, on real time and in a synctest bubble for a state built
// outside it.
func TestFromIsReadAtAReading(t *testing.T) {
	fake := clockwork.NewFakeClock()
	e := clock.Elapsed{Clock: fake}
	e.Start()
	fake.Advance(time.Hour)
	r := clock.Read(fake)
	fake.Advance(time.Minute)
	assert.Equal(t, time.Hour, e.From(r))
	assert.Equal(t, time.Hour+time.Minute, e.Read())

	var real clock.Elapsed
	real.Start()
	r = clock.Read(nil)
	assert.LessOrEqual(t, real.From(r), real.Read())

	outside := clock.Elapsed{}
	outside.Start()
	synctest.Test(t, func(t *testing.T) {
		first := clock.Read(nil)
		assert.Zero(t, outside.From(first), "the first reading moves the epoch into the bubble")
		time.Sleep(5 * time.Second)
		assert.Equal(t, 5*time.Second, outside.From(clock.Read(nil)))
		assert.Equal(t, 5*time.Second, outside.Read())
	})
}

// Count counts every reading on every goroutine, and nothing after it stops.
func TestCountCountsEveryReading(t *testing.T) {
	stop := clock.Count()
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			clock.Read(nil)
			clock.Now(nil)
		})
	}
	wg.Wait()
	assert.EqualValues(t, 8, stop())
	clock.Read(nil)
	assert.EqualValues(t, 8, stop())
}

// Sub saturates as time.Time.Sub does.
func TestSubSaturates(t *testing.T) {
	assert.Equal(t, time.Duration(math.MaxInt64), clock.Sub(math.MaxInt64-1, -2))
	assert.Equal(t, time.Duration(math.MinInt64), clock.Sub(math.MinInt64+1, 2))
	assert.Equal(t, 3*time.Second, clock.Sub(time.Second, -2*time.Second))
}

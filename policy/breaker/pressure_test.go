package breaker_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	conf "github.com/resilience-go/pipeline/internal/breakerconf"
	"github.com/resilience-go/pipeline/policy/breaker"
)

func TestPressureFollowsTheFailureRun(t *testing.T) {
	r := newRig(t, breaker.Config{ConsecutiveFailures: 4})
	assert.Equal(t, 0.0, r.b.Pressure())
	r.run(fail, 0)
	assert.Equal(t, 0.25, r.b.Pressure())
	r.run(throttled, 0) // not evidence: the run goes on
	r.run(fail, 0)
	assert.Equal(t, 0.5, r.b.Pressure())
	r.run(ok, 0)
	assert.Equal(t, 0.0, r.b.Pressure())
}

func TestPressureFollowsTheWindowRatioOnceItHasEnoughCalls(t *testing.T) {
	r := newRig(t, breaker.Config{
		ConsecutiveFailures: math.MaxInt,
		FailureRatio:        0.5,
		MinimumCalls:        4,
		TripWindow:          10 * time.Second,
		WindowBuckets:       10,
	})
	r.run(fail, 0)
	r.run(ok, 0)
	r.run(ok, 0)
	assert.Equal(t, 0.0, r.b.Pressure(), "3 calls are fewer than MinimumCalls")
	r.run(ok, 0)
	assert.Equal(t, 0.5, r.b.Pressure(), "1 failure in 4 is half of the 0.5 trip ratio")

	r.clock.Advance(5 * time.Second)
	r.run(fail, 0)
	r.run(ok, 0)
	r.run(ok, 0)
	r.run(ok, 0)
	assert.Equal(t, 0.5, r.b.Pressure(), "2 failures in 8")

	// Reading between writes: the first 4 samples leave the window as it slides,
	// though nothing rotates it.
	r.clock.Advance(5 * time.Second)
	before := r.b.Snapshot()
	assert.Equal(t, 0.5, r.b.Pressure(), "1 failure in the 4 samples still inside")
	assert.Equal(t, before, r.b.Snapshot(), "reading pressure changed the breaker")
	r.clock.Advance(10 * time.Second)
	assert.Equal(t, 0.0, r.b.Pressure(), "an empty window is no evidence")
}

func TestPressureIsOneUnlessClosed(t *testing.T) {
	r := newRig(t, breaker.Config{ConsecutiveFailures: 1, BreakJitter: breaker.JitterNone})
	r.run(fail, 0)
	assert.Equal(t, breaker.Open, r.state())
	assert.Equal(t, 1.0, r.b.Pressure())
	r.clock.Advance(conf.DefaultBreakDuration)
	assert.Equal(t, 1.0, r.b.Pressure(), "half-open")
	r.b.Reset()
	assert.Equal(t, 0.0, r.b.Pressure())
	r.b.Isolate()
	assert.Equal(t, 1.0, r.b.Pressure())
}

// An absolute FailureRatio trips on one failure, so it counts from the first
// even where the relative point, which needs two, is armed and lower.
func TestPressureCountsOneFailureAgainstAnAbsoluteRatio(t *testing.T) {
	r := newRig(t, breaker.Config{ConsecutiveFailures: math.MaxInt, FailureRatio: 0.1, TripWindow: 10 * time.Second})
	r.serve(200, ok, time.Millisecond, 100*time.Millisecond) // a quiet dependency: relative point at the 5% floor
	r.clock.Advance(10 * time.Second)
	r.serve(19, ok, time.Millisecond, 10*time.Millisecond)
	r.serve(1, fail, time.Millisecond, 10*time.Millisecond)
	assert.InDelta(t, 0.5, r.b.Pressure(), 1e-12, "1 failure in 20 is half of FailureRatio's 10%")
}

package simulation

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline/outcome"
)

// startCapacity starts c with the fixed 10 ms base, unless c has a base.
func startCapacity(t *testing.T, c Capacity) *capacity {
	t.Helper()
	if c.Base == nil {
		c.Base = fixed
	}
	return start(t, c).(*capacity)
}

// drive sends attempts to c evenly at rate per second over [from, to) and
// returns how many there were and how many succeeded.
func drive(c *capacity, rate float64, from, to time.Duration) (sent, ok int) {
	r := newRand()
	for k := 0; ; k++ {
		at := from + time.Duration(float64(k)*float64(time.Second)/rate)
		if at >= to {
			return sent, ok
		}
		sent++
		if ask(c, r, at, 0).Verdict.Kind == outcome.OK {
			ok++
		}
	}
}

func TestCapacityWarmUnderCapacityServesAll(t *testing.T) {
	c := startCapacity(t, Capacity{Rate: 100})
	sent, ok := drive(c, 80, 0, 10*time.Second)
	assert.Equal(t, sent, ok)
	assert.Equal(t, 1.0, c.warmth)
	// At a steady 80 a second, utilisation is 0.8 (0.81 counting the attempt
	// itself on a boundary): latency 10 ms x (1 + 2 x 0.8^2) = 22.8 ms.
	resp := ask(c, newRand(), 10*time.Second, 0)
	assert.InDelta(t, 22.8, float64(resp.Latency)/float64(time.Millisecond), 0.35)
}

func TestCapacityWarmsWithUse(t *testing.T) {
	// Offered 15 a second, a cold dependency (20 a second) is at utilisation
	// u = 15 / (100 x (0.2 + 0.8w)) and warms at u/10 s per second, so
	// 0.2w + 0.4w^2 = 0.015t: w is 0.35 at 10 s, 0.65 at 20 s, warm at 40 s.
	c := startCapacity(t, Capacity{Rate: 100, StartCold: true})
	want := func(t float64) float64 { return min((-0.2+math.Sqrt(0.04+1.6*0.015*t))/0.8, 1) }
	for s := 5; s <= 45; s += 5 {
		sent, ok := drive(c, 15, time.Duration(s-5)*time.Second, time.Duration(s)*time.Second)
		assert.Equal(t, sent, ok, "under capacity, all served")
		assert.InDelta(t, want(float64(s)), c.warmth, 0.03, "warmth at %d s", s)
	}
	assert.Equal(t, 1.0, c.warmth)
}

func TestCapacityWarmsInAboutTenSecondsAtItsCapacity(t *testing.T) {
	// Offered 90% of whatever it can serve, the dependency warms at 0.9/10 s
	// per second: from cold to warm in about 11 s.
	c := startCapacity(t, Capacity{Rate: 100, StartCold: true})
	r := newRand()
	var at time.Duration
	warmAt := time.Duration(-1)
	for at < 20*time.Second {
		require.Equal(t, outcome.OK, ask(c, r, at, 0).Verdict.Kind, "at %v", at)
		if c.warmth == 1 && warmAt < 0 {
			warmAt = at
		}
		at += time.Duration(float64(time.Second) / (0.9 * c.capacity()))
	}
	assert.Greater(t, warmAt, 10*time.Second)
	assert.Less(t, warmAt, 13*time.Second)
}

func TestCapacityColdAtFullLoadStaysCold(t *testing.T) {
	// 60 a second against a cold capacity of 20: utilisation 3, so it sheds
	// two attempts in three and, overloaded, never warms.
	c := startCapacity(t, Capacity{Rate: 100, StartCold: true})
	sent, ok := drive(c, 60, 0, 30*time.Second)
	assert.Equal(t, 0.0, c.warmth)
	assert.InDelta(t, 1.0/3, float64(ok)/float64(sent), 0.03)
}

func TestCapacityKnockedBackWhenOverloaded(t *testing.T) {
	// 150 a second overloads a warm capacity of 100 once the load window holds
	// more than 100 attempts (at 0.67 s); warmth then falls by 1/2 s per second.
	c := startCapacity(t, Capacity{Rate: 100})
	drive(c, 150, 0, time.Second)
	assert.Greater(t, c.warmth, 0.75, "after 1 s, overloaded for a third of it")
	drive(c, 150, time.Second, 3*time.Second)
	assert.Equal(t, 0.0, c.warmth, "knocked back to cold within about 2 s")
	sent, ok := drive(c, 150, 3*time.Second, 10*time.Second)
	assert.InDelta(t, 20.0/150, float64(ok)/float64(sent), 0.03, "serving its cold capacity")
}

func TestCapacityCoolsWhenIdle(t *testing.T) {
	c := startCapacity(t, Capacity{Rate: 100})
	r := newRand()
	ask(c, r, 0, 0)
	ask(c, r, 5*time.Second, 0)
	// A second judged busy at utilisation 0.01, then 4 s idle at 1/10 s per second.
	assert.InDelta(t, 0.6, c.warmth, 0.002)
	ask(c, r, time.Minute, 0)
	assert.Equal(t, 0.0, c.warmth)
}

func TestCapacityCooledByAnOutageCollapsesUnderItsFullLoad(t *testing.T) {
	// 80 calls a second to a warm capacity of 100; a 5 s outage leaves it half
	// warm (capacity 60), so the returning 80 a second overload it and knock it
	// back to cold (20 a second), where the full load keeps it.
	r, err := Run(Config{
		Duration:   40 * time.Second,
		Rate:       80,
		Dependency: Outage{From: 10 * time.Second, To: 15 * time.Second, Base: Capacity{Rate: 100, Base: fixed}},
	})
	require.NoError(t, err)
	served := 0
	for i, s := range r.Seconds[:40] {
		switch {
		case i < 10:
			assert.Equal(t, 80, s.Served, "second %d, before the outage", i)
		case i < 15:
			assert.Zero(t, s.Served, "second %d, in the outage", i)
		case i == 15:
			// The load window emptied during the outage; it takes most of a
			// second to overload the dependency again.
			assert.Equal(t, 80, s.Served, "second %d, just after the outage", i)
		case i >= 20:
			served += s.Served
		}
	}
	assert.InDelta(t, 20, float64(served)/20, 3, "served per second over 20..40 s")
	assert.True(t, r.Recovered, "the first second after the outage is served")
	assert.Zero(t, r.TimeToRecover)
	assert.False(t, r.Stable, "but availability does not stay up")
}

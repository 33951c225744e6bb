package giveway

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"pgregory.net/rapid"

	"github.com/resilience-go/pipeline/criticality"
)

func TestARefusedLevelSqueezesTheLevelsBelowIt(t *testing.T) {
	g := New(criticality.Shares{})
	now := time.Hour
	assert.True(t, g.Admits(criticality.Sheddable, 7, 10, now), "75% of 10")
	assert.False(t, g.Squeezed())
	g.Refused(criticality.Critical, now)
	assert.True(t, g.Squeezed())
	assert.False(t, g.Admits(criticality.Sheddable, 4, 10, now), "half of 7.5")
	assert.True(t, g.Admits(criticality.Sheddable, 3, 10, now))
	assert.False(t, g.Admits(criticality.Default, 5, 10, now), "half of 10")
	assert.True(t, g.Admits(criticality.Critical, 9, 10, now), "Critical never gives way")
	g.Refused(criticality.Critical, now)
	g.Refused(criticality.Critical, now)
	g.Refused(criticality.Critical, now)
	assert.True(t, g.Admits(criticality.Sheddable, 0, 10, now), "every level may take an empty limit")
	assert.False(t, g.Admits(criticality.Sheddable, 1, 10, now))
	now += Recovery / 2
	assert.True(t, g.Admits(criticality.Sheddable, 3, 10, now), "half grown back")
	now += Recovery
	assert.True(t, g.Admits(criticality.Sheddable, 7, 10, now), "whole again")
	assert.False(t, g.Admits(criticality.Sheddable, 8, 10, now), "never more than its share")
	assert.False(t, g.Squeezed())
}

func TestARefusedSheddableCallSqueezesNothing(t *testing.T) {
	g := New(criticality.Shares{})
	g.Refused(criticality.Sheddable, 0)
	assert.False(t, g.Squeezed())
}

// refusedGate draws shares and a gate of them that some refusals of random
// levels at random times have squeezed, and the time of the last one.
func refusedGate(t *rapid.T) (criticality.Shares, Gate, time.Duration) {
	d := rapid.Float64Range(0.05, 1).Draw(t, "default")
	s := criticality.Shares{Default: d, Sheddable: rapid.Float64Range(0.05, d).Draw(t, "sheddable")}
	g := New(s)
	now := time.Duration(0)
	for range rapid.IntRange(0, 20).Draw(t, "events") {
		now += time.Duration(rapid.IntRange(0, int(Recovery/4)).Draw(t, "gap"))
		g.Refused(criticality.Level(rapid.IntRange(1, 3).Draw(t, "refused")), now)
	}
	return s, g, now
}

// At one instant, whatever was refused before, a higher level is admitted
// whenever a lower one is, and no level gets more than its static share.
func TestAHigherLevelIsAdmittedWheneverALowerOneIs(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s, g, now := refusedGate(t)
		limit := float64(rapid.IntRange(0, 200).Draw(t, "limit"))
		used := float64(rapid.IntRange(0, 202).Draw(t, "used"))
		prev := false
		for l := criticality.Sheddable; l <= criticality.Critical; l++ {
			ok := g.Admits(l, used, limit, now)
			if prev && !ok {
				t.Fatalf("%v refused at %v of %v while a lower level is admitted", l, used, limit)
			}
			if ok && !s.Admits(l, used, limit) {
				t.Fatalf("%v admitted at %v of %v beyond its share", l, used, limit)
			}
			prev = ok
		}
	})
}

// Cap is where Admits turns: whatever was refused before, l is admitted
// with Cap-1 units taken and refused with Cap, and Cap is
// criticality.Shares.Cap while nothing gives way.
func TestCapIsWhereAdmitsTurns(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s, g, now := refusedGate(t)
		limit := rapid.IntRange(1, 200).Draw(t, "limit")
		l := criticality.Level(rapid.IntRange(1, 3).Draw(t, "level"))
		c := g.Cap(l, limit, now)
		if c < 1 || c > limit {
			t.Fatalf("Cap %d of a limit of %d", c, limit)
		}
		if !g.Admits(l, float64(c-1), float64(limit), now) || g.Admits(l, float64(c), float64(limit), now) {
			t.Fatalf("Cap %d of %d for %v, but Admits does not turn there", c, limit, l)
		}
		if !g.Squeezed() && c != s.Cap(l, limit) {
			t.Fatalf("Cap %d, Shares.Cap %d with nothing given way", c, s.Cap(l, limit))
		}
	})
	var g Gate
	assert.Zero(t, g.Cap(criticality.Critical, 0, 0))
}

// Settles is how long until every share is whole again, and 0 once it is.
func TestSettles(t *testing.T) {
	g := New(criticality.Shares{})
	assert.Zero(t, g.Settles(0), "nothing given way")
	g.Refused(criticality.Critical, 0) // the levels below give way half
	assert.Equal(t, Recovery/2, g.Settles(0))
	assert.Equal(t, Recovery/4, g.Settles(Recovery/4))
	assert.Zero(t, g.Settles(Recovery))
	assert.False(t, g.Squeezed())
}

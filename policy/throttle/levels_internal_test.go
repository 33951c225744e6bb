package throttle

import (
	"math/rand/v2"
	"testing"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/resilience-go/pipeline/criticality"
	"github.com/resilience-go/pipeline/outcome"
)

func TestAHigherLevelIsNeverRefusedMoreThanALowerOne(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p := rapid.Float64Range(0, 0.9).Draw(t, "p")
		prev := 1.0
		for l := criticality.Sheddable; l <= criticality.Critical; l++ {
			q := levelled(p, l, 0.9)
			if q > prev || q > 0.9 || q < 0 || p == 0 && q != 0 {
				t.Fatalf("%v: %v at p %v (the level below: %v)", l, q, p, prev)
			}
			prev = q
		}
	})
}

// From the same state (a dependency that answered half its requests with a
// rejection), the same draws admit more Critical attempts than Default ones,
// and more Default than Sheddable.
func TestCriticalAttemptsAreRefusedLeast(t *testing.T) {
	admitted := func(l criticality.Level) int {
		th, err := New(Config{Clock: clockwork.NewFakeClock(), Rand: rand.NewPCG(1, 2)})
		require.NoError(t, err)
		for i := range 100 {
			tk, ok := th.admit(criticality.Default)
			if !ok { // refused once rejections are counted: the same in every run
				continue
			}
			v := outcome.Verdict{Kind: outcome.OK}
			if i%4 != 0 {
				v.Kind = outcome.Throttled // three in four rejected
			}
			th.Record(tk, v)
		}
		n := 0
		for range 200 {
			if _, ok := th.admit(l); ok {
				n++
			}
		}
		return n
	}
	shed, def, crit := admitted(criticality.Sheddable), admitted(criticality.Default), admitted(criticality.Critical)
	t.Log(shed, def, crit)
	assert.Less(t, shed, def)
	assert.Less(t, def, crit)
}

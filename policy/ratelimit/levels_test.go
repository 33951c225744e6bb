package ratelimit_test

import (
	"context"
	"testing"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/criticality"
	"github.com/resilience-go/pipeline/policy/ratelimit"
)

func TestSheddableCallsLeaveTheLastQuarterOfTheBucket(t *testing.T) {
	l, err := ratelimit.New(ratelimit.Config{Rate: 1, Burst: 8, Clock: clockwork.NewFakeClock()})
	require.NoError(t, err)
	p := pipeline.New[int](ratelimit.Guard[int](l))
	call := func(lv criticality.Level) error {
		_, err := p.Execute(criticality.With(context.Background(), lv), func(context.Context) (int, error) { return 1, nil })
		return err
	}
	for range 6 {
		require.NoError(t, call(criticality.Sheddable))
	}
	assert.ErrorIs(t, call(criticality.Sheddable), pipeline.RateLimited, "three quarters of 8 tokens are Sheddable's")
	require.NoError(t, call(criticality.Default), "the last quarter is the others'")
	require.NoError(t, call(criticality.Critical))
	assert.ErrorIs(t, call(criticality.Critical), pipeline.RateLimited, "empty")
}

// At one instant a higher level is admitted whenever a lower one is: from
// the same bucket, after the same calls.
func TestAHigherLevelIsAdmittedWheneverALowerOneIs(t *testing.T) {
	for taken := range 9 {
		var prev bool
		for lv := criticality.Sheddable; lv <= criticality.Critical; lv++ {
			l, err := ratelimit.New(ratelimit.Config{Rate: 1, Burst: 8, Clock: clockwork.NewFakeClock()})
			require.NoError(t, err)
			for range taken {
				_, _ = l.Allow()
			}
			p := pipeline.New[int](ratelimit.Guard[int](l))
			_, err = p.Execute(criticality.With(context.Background(), lv), func(context.Context) (int, error) { return 1, nil })
			ok := err == nil
			assert.False(t, prev && !ok, "%v refused after %d taken while a lower level is admitted", lv, taken)
			prev = ok
		}
	}
}

func TestWithABurstOfOneEveryLevelTakesTheToken(t *testing.T) {
	l, err := ratelimit.New(ratelimit.Config{Rate: 1, Burst: 1, Clock: clockwork.NewFakeClock()})
	require.NoError(t, err)
	p := pipeline.New[int](ratelimit.Guard[int](l))
	_, err = p.Execute(criticality.With(context.Background(), criticality.Sheddable), func(context.Context) (int, error) { return 1, nil })
	assert.NoError(t, err, "the one token, whatever the level")
	_, err = p.Execute(criticality.With(context.Background(), criticality.Critical), func(context.Context) (int, error) { return 1, nil })
	assert.ErrorIs(t, err, pipeline.RateLimited)
}

package retryrule

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/budget"
	"github.com/resilience-go/pipeline/criticality"
	"github.com/resilience-go/pipeline/outcome"
)

// fixed is a backoff of one delay.
type fixed time.Duration

func (f fixed) Delay(int, outcome.Verdict, rand.Source) time.Duration { return time.Duration(f) }

func TestNewFillsTheDefaults(t *testing.T) {
	r := New(0, fixed(0), 0, nil, rand.NewPCG(1, 1))
	assert.Equal(t, 3, r.MaxAttempts)
	assert.Equal(t, 100*time.Millisecond, r.Pause)
	assert.Zero(t, New(2, fixed(0), -time.Second, nil, rand.NewPCG(1, 1)).Pause, "negative: no pause")
}

// TestAfterDecidesInOrder: each rule of After, first match wins.
func TestAfterDecidesInOrder(t *testing.T) {
	transient := outcome.Verdict{Kind: outcome.Transient}
	hinted := outcome.Verdict{Kind: outcome.Throttled}.WithRetryAfter(5 * time.Second)
	r := New(3, fixed(time.Second), -1, nil, rand.NewPCG(1, 1))
	for _, c := range []struct {
		name    string
		n       int
		v       outcome.Verdict
		left    time.Duration
		bounded bool
		want    Step
	}{
		{"permanent", 1, outcome.Verdict{Kind: outcome.Permanent}, 0, false, Step{Reason: pipeline.Permanent}},
		{"the last attempt", 3, transient, 0, false, Step{Reason: pipeline.AttemptsExhausted}},
		{"the backoff reaches the deadline", 1, transient, time.Second, true, Step{Reason: pipeline.Deadline}},
		{"the hint alone reaches it too", 1, hinted, time.Second, true, Step{Reason: pipeline.HintBeyondDeadline, RetryAfter: 5 * time.Second}},
		{"time for the backoff", 1, transient, 2 * time.Second, true, Step{Delay: time.Second}},
		{"no deadline", 2, transient, 0, false, Step{Delay: time.Second}},
	} {
		assert.Equal(t, c.want, r.After(c.n, c.v, c.left, c.bounded, criticality.Default), c.name)
	}
}

func TestAfterStopsWhenTheBudgetCannotPay(t *testing.T) {
	b, err := budget.New(budget.Config{Capacity: 1})
	require.NoError(t, err)
	r := New(5, fixed(0), -1, b, rand.NewPCG(1, 1))
	transient := outcome.Verdict{Kind: outcome.Transient}
	assert.Equal(t, Step{}, r.After(1, transient, 0, false, criticality.Default), "paid")
	st := r.After(2, transient, 0, false, criticality.Default)
	assert.Equal(t, pipeline.BudgetExhausted, st.Reason)
}

func TestRefusalPause(t *testing.T) {
	r := Rule{Pause: 100 * time.Millisecond}
	assert.Equal(t, 100*time.Millisecond, r.RefusalPause(0, 0, false))
	assert.Equal(t, 20*time.Millisecond, r.RefusalPause(20*time.Millisecond, 0, false), "a hint that asks for less")
	assert.Equal(t, 30*time.Millisecond, r.RefusalPause(time.Second, 30*time.Millisecond, true), "no longer than the deadline")
	assert.Zero(t, r.RefusalPause(0, -time.Second, true), "a deadline passed")
	var none Rule
	assert.Zero(t, none.RefusalPause(time.Second, time.Second, true), "no pause set")
}

package breaker_test

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	conf "github.com/resilience-go/pipeline/internal/breakerconf"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/breaker"
)

// ramped trips a breaker built from cfg (one failure must trip it), waits out
// the break and lets instant probes succeed until it leaves HalfOpen.
func ramped(t *testing.T, cfg breaker.Config) *rig {
	t.Helper()
	r := newRig(t, cfg)
	r.run(fail, 0)
	require.Equal(t, breaker.Open, r.state())
	r.clock.Advance(r.b.Snapshot().Break)
	for r.state() == breaker.HalfOpen {
		r.run(ok, 0)
	}
	return r
}

func TestRecoveryDefaultsAreValid(t *testing.T) {
	require.NoError(t, breaker.Config{Recovery: &breaker.Recovery{}}.Validate())
	r := ramped(t, breaker.Config{ConsecutiveFailures: 1, BreakJitter: breaker.JitterNone, Recovery: &breaker.Recovery{}})
	s := r.b.Snapshot()
	require.Equal(t, breaker.Recovering, s.State)
	assert.Equal(t, conf.DefaultRecoveryInitial, s.RampFraction)
	assert.Equal(t, time.Duration(conf.DefaultRecoveryFraction*float64(conf.DefaultBreakDuration)), s.RampLength)
	assert.Equal(t, epoch.Add(conf.DefaultBreakDuration), s.RampStarted)
}

// TestRampLengthFollowsTheBreak: the ramp lasts Fraction of the break just
// served, within [Minimum, Maximum]; a zero bound never contradicts the other.
func TestRampLengthFollowsTheBreak(t *testing.T) {
	tests := []struct {
		brk  time.Duration
		rec  breaker.Recovery
		want time.Duration
	}{
		{15 * time.Second, breaker.Recovery{}, 3750 * time.Millisecond},
		{2 * time.Second, breaker.Recovery{}, time.Second},                               // Minimum
		{2 * time.Minute, breaker.Recovery{}, 30 * time.Second},                          // exactly
		{4 * time.Minute, breaker.Recovery{}, 30 * time.Second},                          // Maximum
		{4 * time.Minute, breaker.Recovery{Minimum: 45 * time.Second}, 45 * time.Second}, // Maximum widens to Minimum
		{2 * time.Second, breaker.Recovery{Maximum: 300 * time.Millisecond}, 300 * time.Millisecond},
		{8 * time.Second, breaker.Recovery{Fraction: 1}, 8 * time.Second},
		{8 * time.Second, breaker.Recovery{Fraction: 1, Minimum: time.Millisecond, Maximum: 2 * time.Second}, 2 * time.Second},
	}
	for _, tc := range tests {
		rec := tc.rec
		r := ramped(t, breaker.Config{ConsecutiveFailures: 1, BreakDuration: tc.brk, BreakJitter: breaker.JitterNone, Recovery: &rec})
		assert.Equal(t, tc.want, r.b.Snapshot().RampLength, "break %v, %+v", tc.brk, tc.rec)
	}
	// With jitter, the ramp follows the break actually served.
	for range 20 {
		r := ramped(t, breaker.Config{ConsecutiveFailures: 1, BreakDuration: time.Minute, Recovery: &breaker.Recovery{}})
		s := r.b.Snapshot()
		assert.Equal(t, time.Duration(0.25*float64(s.Break)), s.RampLength)
	}
}

// TestWithoutRecoveryItIsACliff: a nil Recovery closes as soon as the probes
// succeed and admits everything at once; a slow probe re-opens.
func TestWithoutRecoveryItIsACliff(t *testing.T) {
	cfg := exact()
	cfg.Recovery = nil
	r := ramped(t, cfg)
	assert.Equal(t, breaker.Closed, r.state())
	offers(32, 32, 0)(r)
	assert.Equal(t, []string{"closed->open", "open->half-open", "half-open->closed"}, r.transitions())
	s := r.b.Snapshot()
	assert.Zero(t, s.RampFraction)
	assert.Zero(t, s.RampLength)
	assert.True(t, s.RampStarted.IsZero())
}

// TestRampRunOutReadsClosed: once p reaches 1 every read says Closed (state,
// growth) and nothing moves until an admission does; pressure reads full
// until then, and falls over a trip window after the close.
func TestRampRunOutReadsClosed(t *testing.T) {
	r := ramped(t, exact())
	assert.Equal(t, 1.0, r.b.Pressure(), "a ramp is no place for a hedge")
	assert.Equal(t, 1, r.b.Snapshot().Trips)
	r.clock.Advance(4 * time.Second)
	events := len(r.events)
	before := r.b.Snapshot()
	for range 3 {
		assert.Equal(t, breaker.Closed, r.b.State())
		assert.Equal(t, 1.0, r.b.Pressure(), "not closed yet: just recovered")
		assert.Equal(t, before, r.b.Snapshot())
	}
	assert.Equal(t, breaker.Closed, before.State)
	assert.Equal(t, 0, before.Trips, "reads what closing will leave")
	assert.Zero(t, before.RampFraction)
	assert.True(t, before.RampStarted.IsZero())
	assert.Equal(t, events, len(r.events), "reads emit nothing")
	r.admit()
	assert.Equal(t, []string{"closed->open", "open->half-open", "half-open->recovering", "recovering->closed"}, r.transitions())
	assert.Equal(t, before, r.b.Snapshot(), "the admission did what the reads said")
	assert.Equal(t, 1.0, r.b.Pressure(), "closed this instant")
	r.clock.Advance(conf.DefaultTripWindow / 4)
	assert.Equal(t, 0.75, r.b.Pressure(), "a quarter of the trip window later")
	r.clock.Advance(conf.DefaultTripWindow * 3 / 4)
	assert.Equal(t, 0.0, r.b.Pressure(), "a trip window later")
}

// TestAResetLeavesNoRecoveryPressure: Reset is an operator's close, which
// says nothing of a recovery.
func TestAResetLeavesNoRecoveryPressure(t *testing.T) {
	r := ramped(t, exact())
	r.clock.Advance(4 * time.Second)
	r.admit()
	require.Equal(t, 1.0, r.b.Pressure())
	r.b.Reset()
	assert.Equal(t, 0.0, r.b.Pressure())
}

// TestRampDeficitAccounting: at the defaults, a ramp admits an even share of
// what it is offered: the admitted count is the floor of the summed p, within
// one, and the admissions are evenly spaced rather than clumped.
func TestRampDeficitAccounting(t *testing.T) {
	run := func() []int {
		r := ramped(t, breaker.Config{ConsecutiveFailures: 1, BreakJitter: breaker.JitterNone, Recovery: &breaker.Recovery{}})
		var admitted []int
		sum := 0.0
		for i := 0; r.state() == breaker.Recovering; i++ {
			p := r.b.Snapshot().RampFraction
			sum += p
			if t, err := r.b.Admit(); err == nil {
				admitted = append(admitted, i)
				r.b.Record(t, ok, 0)
			}
			if i < 1000 {
				continue // the first thousand offers at one instant: p = 0.05
			}
			require.InDelta(t, math.Floor(sum), float64(len(admitted)), 1, "offer %d", i)
			r.clock.Advance(time.Millisecond)
		}
		return admitted
	}
	admitted := run()
	for i := 1; i < len(admitted) && admitted[i] < 1000; i++ {
		gap := admitted[i] - admitted[i-1]
		assert.True(t, gap == 20 || gap == 21, "admission %d after %d offers, not 1 in 20", i, gap)
	}
	assert.InDelta(t, 50, countBelow(admitted, 1000), 1)
	assert.Equal(t, admitted, run(), "deterministic on a fake clock")
}

func countBelow(xs []int, n int) int {
	c := 0
	for _, x := range xs {
		if x < n {
			c++
		}
	}
	return c
}

// TestRampRefusalThroughGuard: a refusal while Recovering is an open breaker's
// refusal, without a hint.
func TestRampRefusalThroughGuard(t *testing.T) {
	r := ramped(t, exact())
	r.clock.Advance(time.Second)
	ctx := context.Background()
	p := pipeline.New(breaker.Guard[int](r.b))
	// The credit starts at 0 and grows by 11/32 per offer: the first two offers
	// are refused, the third admitted.
	_, err := p.Execute(ctx, func(context.Context) (int, error) { return 1, nil })
	refused, isStop := errors.AsType[*pipeline.StopError](err)
	require.True(t, isStop, "error %v", err)
	assert.Equal(t, pipeline.DependencyUnavailable, refused.Reason)
	assert.Zero(t, refused.RetryAfter)
	res := breaker.Guard[int](r.b).Execute(ctx, nextOf(func(context.Context) (int, error) { return 1, nil }))
	require.Error(t, res.Err)
	assert.Equal(t, outcome.Verdict{Kind: outcome.Throttled, SelfImposed: true}, res.Verdict)
	v, err := p.Execute(ctx, func(context.Context) (int, error) { return 7, nil })
	require.NoError(t, err)
	assert.Equal(t, 7, v)
	var rej breaker.Rejection
	for _, e := range r.events {
		if e, isRej := e.(breaker.Rejection); isRej {
			rej = e
		}
	}
	assert.Equal(t, breaker.Rejection{State: breaker.Recovering, At: r.clock.Now()}, rej)
}

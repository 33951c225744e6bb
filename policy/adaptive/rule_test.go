package adaptive_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/adaptive"
)

var (
	success   = outcome.Verdict{}
	canceled  = outcome.Verdict{Kind: outcome.Permanent, Canceled: true}
	throttled = outcome.Verdict{Kind: outcome.Throttled}
)

// rig drives a limiter on a fake clock with batches of calls of set latency.
type rig struct {
	t     *testing.T
	clock *clockwork.FakeClock
	l     *adaptive.Limiter
	start time.Time
}

func newRig(t *testing.T, cfg adaptive.Config) *rig {
	t.Helper()
	clock := clockwork.NewFakeClock()
	cfg.Clock = clock
	l, err := adaptive.New(cfg)
	require.NoError(t, err)
	return &rig{t: t, clock: clock, l: l, start: clock.Now()}
}

// batch runs c calls at once that each take d and end with v.
func (r *rig) batch(c int, d time.Duration, v outcome.Verdict) {
	r.t.Helper()
	tickets := make([]adaptive.Ticket, c)
	for i := range tickets {
		var ok bool
		tickets[i], ok = r.l.TryAcquire(context.Background())
		require.True(r.t, ok, "call %d of %d refused at limit %d", i+1, c, r.l.Limit())
	}
	r.clock.Advance(d)
	for _, tk := range tickets {
		r.l.Done(tk, v)
	}
}

// interval runs two batches of c calls of latency d, within one interval.
func (r *rig) interval(c int, d time.Duration) {
	r.t.Helper()
	r.batch(c, d, success)
	r.batch(c, d, success)
}

// revise moves to the next interval and ends a call there that teaches
// nothing, which revises the limit; it returns the revision.
func (r *rig) revise() adaptive.Revision {
	r.t.Helper()
	elapsed := r.clock.Since(r.start)
	r.clock.Advance(elapsed.Truncate(time.Second) + time.Second - elapsed)
	tk, ok := r.l.TryAcquire(context.Background())
	require.True(r.t, ok)
	r.l.Done(tk, canceled)
	return r.l.Snapshot().Last
}

// TestTheRuleStepByStep walks the rule through a table of intervals: each
// runs calls of a concurrency and a latency, then revises the limit.
func TestTheRuleStepByStep(t *testing.T) {
	r := newRig(t, adaptive.Config{})
	ms := time.Millisecond
	for i, step := range []struct {
		what     string
		c        int
		d        time.Duration
		throttle bool
		why      adaptive.Why
		to       int
		recent   time.Duration
		baseline time.Duration
	}{
		{"in use, fast: grow by the square root", 12, 10 * ms, false, adaptive.Grew, 24, 10 * ms, 10 * ms},              // 20 + 4.47
		{"used under half: no growth", 12, 10 * ms, false, adaptive.Held, 24, 10 * ms, 10 * ms},                         // 12 < 24.47/2
		{"three times slower: a queue, cut by half at most", 20, 30 * ms, false, adaptive.Queued, 12, 30 * ms, 10 * ms}, // 24.47 x 0.5
		{"the cut did not help: slower on its own", 12, 30 * ms, false, adaptive.Slower, 12, 30 * ms, 30 * ms},
		{"from the slower baseline, grow again", 12, 30 * ms, false, adaptive.Grew, 15, 30 * ms, 30 * ms}, // 12.2 + 3.5
		{"fast again: the slower baseline is dropped", 12, 10 * ms, false, adaptive.Grew, 19, 10 * ms, 10 * ms},
		{"throttled: cut by a fifth", 12, 10 * ms, true, adaptive.Throttled, 15, 0, 0}, // 19.7 x 0.8
		{"four times slower: cut by half", 15, 40 * ms, false, adaptive.Queued, 7, 40 * ms, 10 * ms},
		{"the cut helped: grow", 7, 10 * ms, false, adaptive.Grew, 10, 10 * ms, 10 * ms},
		{"a little slower, within tolerance: grow", 10, 14 * ms, false, adaptive.Grew, 13, 14 * ms, 10 * ms},
	} {
		if step.throttle {
			r.batch(step.c, step.d, throttled)
		} else {
			r.interval(step.c, step.d)
		}
		rev := r.revise()
		assert.Equal(t, step.why, rev.Why, "step %d: %s", i, step.what)
		assert.Equal(t, step.to, rev.To, "step %d: %s", i, step.what)
		assert.Equal(t, step.to, r.l.Limit(), "step %d: the slots follow the limit", i)
		if step.recent > 0 {
			// The histogram places a quantile within a few percent.
			assert.InEpsilon(t, step.recent, rev.Recent, 0.06, "step %d: %s", i, step.what)
			assert.InEpsilon(t, step.baseline, rev.Baseline, 0.06, "step %d: %s", i, step.what)
		}
		assert.Equal(t, step.c, rev.Peak, "step %d", i)
	}
}

func TestTooFewSamplesChangeNothing(t *testing.T) {
	r := newRig(t, adaptive.Config{MinSamples: 30})
	r.interval(12, 10*time.Millisecond) // 24 samples
	rev := r.revise()
	assert.Equal(t, adaptive.Held, rev.Why)
	assert.Equal(t, 20, rev.To)
}

func TestTheLimitStaysWithinItsBounds(t *testing.T) {
	r := newRig(t, adaptive.Config{MinLimit: 5, MaxLimit: 22})
	r.interval(12, 10*time.Millisecond)
	assert.Equal(t, 22, r.revise().To, "growth stops at MaxLimit")
	for range 8 {
		r.batch(5, 10*time.Millisecond, throttled)
		r.revise()
	}
	assert.Equal(t, 5, r.l.Limit(), "cuts stop at MinLimit")
}

// TestTheHintIsTheMedianOnTheEstimatorsClock reads a refusal's hint after
// calls of two latencies, as the limiter's clock measured them. Calls of
// 40 ms read as 40 ms. Calls held while the clock jumps forty minutes read as
// the top of the estimator's histogram, 2^35 ns rounded up to the
// millisecond: the hint never exceeds 34.36 s, however long the calls took.
func TestTheHintIsTheMedianOnTheEstimatorsClock(t *testing.T) {
	r := newRig(t, adaptive.Config{InitialLimit: 1, MinLimit: 1, MaxLimit: 1})
	hint := func() time.Duration {
		t.Helper()
		tk, ok := r.l.TryAcquire(context.Background())
		require.True(t, ok)
		defer r.l.Done(tk, canceled)
		_, err := r.l.Acquire(t.Context())
		stop, isStop := errors.AsType[*pipeline.StopError](err)
		require.True(t, isStop, "want a refusal, got %v", err)
		return stop.RetryAfter
	}
	for range 12 {
		r.batch(1, 40*time.Millisecond, success)
	}
	r.revise()
	assert.InEpsilon(t, 40*time.Millisecond, hint(), 0.05)
	r.batch(1, 40*time.Minute, success) // the 40 ms calls leave the 30 s window
	r.revise()
	assert.Equal(t, 34360*time.Millisecond, hint())
}

package ratelimit_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline/policy/ratelimit"
)

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// newLimiter builds a limiter on a fake clock.
func newLimiter(t *testing.T, cfg ratelimit.Config) (*ratelimit.Limiter, *clockwork.FakeClock) {
	t.Helper()
	clock := clockwork.NewFakeClockAt(epoch)
	cfg.Clock = clock
	l, err := ratelimit.New(cfg)
	require.NoError(t, err)
	return l, clock
}

// TestBucketSteps walks a bucket of 10 tokens a second, 3 deep, through a
// table of steps: each advances the clock and then calls Allow.
func TestBucketSteps(t *testing.T) {
	l, clock := newLimiter(t, ratelimit.Config{Rate: 10, Burst: 3})
	ms := time.Millisecond
	for i, step := range []struct {
		advance time.Duration
		ok      bool
		wait    time.Duration // the hint of a refusal
		tokens  float64       // after the call
	}{
		{0, true, 0, 2}, // a new limiter starts full
		{0, true, 0, 1},
		{0, true, 0, 0},
		{0, false, 100 * ms, 0}, // empty: the next token is a full interval away
		{40 * ms, false, 60 * ms, 0.4},
		{60 * ms, true, 0, 0}, // exactly one interval: one token
		{250 * ms, true, 0, 1.5},
		{0, true, 0, 0.5},
		{0, false, 50 * ms, 0.5},
		{10 * time.Second, true, 0, 2}, // a long pause refills to Burst, no more
	} {
		clock.Advance(step.advance)
		wait, ok := l.Allow()
		assert.Equal(t, step.ok, ok, "step %d", i)
		assert.Equal(t, step.wait, wait, "step %d: the hint must be the time until the next token", i)
		assert.InDelta(t, step.tokens, l.Tokens(), 1e-9, "step %d", i)
	}
}

// TestRateIsRoundedDown checks that a rate whose interval is not a whole
// number of nanoseconds never admits more than the rate: the interval is
// rounded up.
func TestRateIsRoundedDown(t *testing.T) {
	l, clock := newLimiter(t, ratelimit.Config{Rate: 3, Burst: 1})
	admitted := 0
	for range 3000 { // 30 s in steps of 10 ms
		if _, ok := l.Allow(); ok {
			admitted++
		}
		clock.Advance(10 * time.Millisecond)
	}
	assert.LessOrEqual(t, admitted, 3*30+1)
	assert.GreaterOrEqual(t, admitted, 3*30-4, "the 10 ms steps delay each token by less than a step")
}

// TestALimiterIsTimedOnItsCallersClock builds limiters outside a synctest
// bubble and calls them inside one, whose time starts at 2000-01-01: the
// limiter counts from its first call, so it admits its burst, refuses the
// next call with a token's interval as the hint and earns tokens at its rate
// on the bubble's clock, whether it reads real time or a clockwork real
// clock. (Timed from New, it refused every call with a hint of about 230,000
// hours, the distance between the two clocks.)
func TestALimiterIsTimedOnItsCallersClock(t *testing.T) {
	for name, c := range map[string]clockwork.Clock{"real time": nil, "a clockwork real clock": clockwork.NewRealClock()} {
		t.Run(name, func(t *testing.T) {
			l, err := ratelimit.New(ratelimit.Config{Rate: 10, Burst: 2, Clock: c})
			require.NoError(t, err)
			synctest.Test(t, func(t *testing.T) {
				for i := range 2 {
					_, ok := l.Allow()
					assert.True(t, ok, "call %d of the burst", i)
				}
				wait, ok := l.Allow()
				assert.False(t, ok)
				assert.Equal(t, 100*time.Millisecond, wait)
				time.Sleep(wait)
				_, ok = l.Allow()
				assert.True(t, ok, "the token earned on the bubble's clock")
			})
		})
	}
}

// TestAClockSetBackHoldsTheBucket sets a fake clock back an hour: the
// limiter earns nothing until the clock is back where it was, and its hint
// never exceeds a token's interval however far back the clock went.
func TestAClockSetBackHoldsTheBucket(t *testing.T) {
	l, clock := newLimiter(t, ratelimit.Config{Rate: 10, Burst: 1})
	_, ok := l.Allow()
	require.True(t, ok)
	clock.Advance(-time.Hour)
	wait, ok := l.Allow()
	assert.False(t, ok)
	assert.Equal(t, 100*time.Millisecond, wait)
	clock.Advance(time.Hour + 100*time.Millisecond)
	_, ok = l.Allow()
	assert.True(t, ok)
}

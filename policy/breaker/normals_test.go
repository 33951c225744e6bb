package breaker_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	conf "github.com/resilience-go/pipeline/internal/breakerconf"
	"github.com/resilience-go/pipeline/internal/histogram"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/breaker"
)

// serve runs n whole calls, one every gap, each taking d and ending with v.
func (r *rig) serve(n int, v outcome.Verdict, d, gap time.Duration) {
	r.t.Helper()
	for range n {
		r.run(v, d)
		r.clock.Advance(gap - d)
	}
}

// normalLatency requires a normal latency and returns it.
func (r *rig) normalLatency() time.Duration {
	r.t.Helper()
	d, ok := r.b.NormalLatency()
	require.True(r.t, ok, "no normal latency")
	return d
}

// lastTrip returns the cause of the last transition to Open.
func (r *rig) lastTrip() breaker.Cause {
	r.t.Helper()
	for i := len(r.events) - 1; i >= 0; i-- {
		if tr, isTr := r.events[i].(breaker.Transition); isTr && tr.To == breaker.Open {
			return tr.Cause
		}
	}
	r.t.Fatal("no trip")
	return 0
}

// A brownout against the defaults: 5 minutes of 10 ms calls at 10 per second,
// then every call takes 100 ms. The median of the 5-minute baseline stays at
// 10 ms (the threshold at about 33 ms) while the 30 s trip window fills with slow
// calls: half of its ~300 samples are slow after SlowCallRatio × TripWindow =
// 15 s, and the breaker opens then, not before 12 s and not after 18 s.
func TestBrownoutTripsAgainstTheMedian(t *testing.T) {
	r := newRig(t, breaker.Config{BreakJitter: breaker.JitterNone})
	r.serve(3000, ok, 10*time.Millisecond, 100*time.Millisecond)
	healthy := r.normalLatency()
	assert.InDelta(t, float64(10*time.Millisecond), float64(healthy), 0.02*float64(10*time.Millisecond), "a steady latency reads within 2%")
	assert.Equal(t, scaled(healthy, 3), r.b.Snapshot().SlowCallThreshold)

	var took time.Duration
	for took = 0; r.state() == breaker.Closed && took < time.Minute; took += 100 * time.Millisecond {
		r.serve(1, ok, 100*time.Millisecond, 100*time.Millisecond)
	}
	require.Equal(t, breaker.Open, r.state())
	assert.Equal(t, breaker.CauseSlowCalls, r.lastTrip())
	assert.GreaterOrEqual(t, took, 12*time.Second)
	assert.LessOrEqual(t, took, 18*time.Second)
	assert.InDelta(t, float64(healthy), float64(r.normalLatency()), 0.19*float64(healthy),
		"150 slow calls out of 3000 do not move the median out of its bucket")
}

// scaled is m × d as the breaker computes a measured threshold.
func scaled(d time.Duration, m float64) time.Duration { return time.Duration(float64(d) * m) }

// The design the breaker refuses, in numbers: a threshold read from the p99 of the
// same recent latency (here a 30 s window, read at every call, as a hedge reads
// its delay) has about 1% of calls above it whatever the dependency does, so a
// brownout never fills half a trip window with slow calls. We measure the slow
// share of every 30 s trip window through a tenfold brownout: under 5% at worst
// (while the quantile climbs through the brownout's spread), against a
// SlowCallRatio of 50%. The breaker caps Quantile at 0.5 for this reason.
func TestP99ThresholdCannotTrip(t *testing.T) {
	w, err := histogram.New(30*time.Second, 10)
	require.NoError(t, err)
	const perSecond = 10
	var slowBySecond []int
	for s := range 300 { // 2 minutes healthy, then a brownout
		base := 10 * time.Millisecond
		if s >= 120 {
			base = 100 * time.Millisecond
		}
		slow := 0
		for i := range perSecond {
			now := time.Duration(s)*time.Second + time.Duration(i)*time.Second/perSecond
			// Spread evenly over [1, 1.5) × base, in a scrambled order.
			d := base + base*time.Duration((s*perSecond+i)*7919%1000)/2000
			if p99, n := w.Quantile(now, 0.99); n >= conf.DefaultSlowCallsMinimumSamples && d > p99 {
				slow++
			}
			w.Add(now, d)
		}
		slowBySecond = append(slowBySecond, slow)
	}
	worst := 0.0
	for end := 30; end <= len(slowBySecond); end++ {
		n := 0
		for _, s := range slowBySecond[end-30 : end] {
			n += s
		}
		worst = max(worst, float64(n)/(30*perSecond))
	}
	t.Logf("worst slow share of a 30 s window: %.1f%%", 100*worst)
	assert.Less(t, worst, 0.1, "a p99 threshold reads a few per cent slow at worst, brownout or not")

	_, err = breaker.New(breaker.Config{SlowCalls: breaker.SlowCalls{Quantile: 0.99}})
	assert.ErrorContains(t, err, "Config.SlowCalls.Quantile must lie in (0, 0.5]")
}

func TestNormalLatencyColdStartAndDecay(t *testing.T) {
	r := newRig(t, breaker.Config{BreakJitter: breaker.JitterNone, MinimumCalls: 4})
	r.serve(15, ok, 10*time.Millisecond, 100*time.Millisecond)
	r.serve(4, fail, time.Millisecond, 100*time.Millisecond) // failures are not samples of latency
	r.serve(4, ok, time.Second, time.Second)
	_, known := r.b.NormalLatency()
	assert.False(t, known, "19 successes: none")
	assert.Equal(t, time.Duration(0), r.b.Snapshot().SlowCallThreshold)
	assert.Equal(t, breaker.Closed, r.state(), "with no baseline and no constant, nothing is slow")

	r.serve(1, ok, time.Second, time.Second)
	normal := r.normalLatency() // the 20th success arms it: the median is still a fast call
	assert.Less(t, normal, 12*time.Millisecond)
	r.clock.Advance(conf.DefaultTripWindow) // an empty trip window, the same baseline
	r.serve(3, ok, time.Second, time.Second)
	assert.Equal(t, breaker.Closed, r.state())
	r.serve(1, ok, time.Second, time.Second)
	assert.Equal(t, breaker.Open, r.state(), "armed: 4 slow calls of 4")
	assert.Equal(t, breaker.CauseSlowCalls, r.lastTrip())

	// Idle for a whole window, the baseline decays to none, and the slow-call
	// trip is disarmed until 20 successes rebuild it.
	r = newRig(t, breaker.Config{BreakJitter: breaker.JitterNone, MinimumCalls: 4})
	r.serve(20, ok, 10*time.Millisecond, 100*time.Millisecond)
	r.normalLatency()
	r.clock.Advance(conf.DefaultSlowCallsWindow)
	_, known = r.b.NormalLatency()
	assert.False(t, known, "an idle window reports none, not something stale")
	r.serve(8, ok, 10*time.Second, 10*time.Second)
	assert.Equal(t, breaker.Closed, r.state(), "disarmed: slow calls are not slow")
}

func TestMeasuredThresholdOnlyTightensTheConstant(t *testing.T) {
	r := newRig(t, breaker.Config{SlowCallThreshold: time.Second, MinimumCalls: 4})
	assert.Equal(t, time.Second, r.b.Snapshot().SlowCallThreshold, "no baseline: the constant alone")
	r.serve(20, ok, 10*time.Millisecond, time.Second)
	normal := r.normalLatency()
	assert.Equal(t, scaled(normal, 3), r.b.Snapshot().SlowCallThreshold, "3 × 10 ms is below 1 s")

	r = newRig(t, breaker.Config{SlowCallThreshold: 100 * time.Millisecond, MinimumCalls: math.MaxInt})
	r.serve(20, ok, time.Second, 2*time.Second) // slow by the constant all along
	_, known := r.b.NormalLatency()
	require.True(t, known, "slow successes still feed the baseline")
	assert.Equal(t, 100*time.Millisecond, r.b.Snapshot().SlowCallThreshold, "3 × 1 s would loosen it")
}

// Probes are judged against ProbeSlowFraction (0.7) of 3 × the measured
// normal of 10 ms, 21 ms: a probe of 25 ms is slow, though a call of 25 ms is
// not.
func TestSlowProbeAgainstTheMeasuredNormal(t *testing.T) {
	for _, tc := range []struct {
		probe time.Duration
		n     int // probes that decide
		want  breaker.State
	}{
		{15 * time.Millisecond, conf.DefaultProbeSuccesses, breaker.Closed}, // under 21 ms: fast
		{25 * time.Millisecond, conf.DefaultProbeSlowLead, breaker.Open},    // over 21 ms: not a recovery
		{100 * time.Millisecond, conf.DefaultProbeSlowLead, breaker.Open},   // over 30 ms too
	} {
		r := newRig(t, breaker.Config{BreakJitter: breaker.JitterNone})
		r.serve(100, ok, 10*time.Millisecond, time.Second)
		r.serve(5, fail, time.Millisecond, time.Millisecond)
		require.Equal(t, breaker.Open, r.state())
		r.clock.Advance(conf.DefaultBreakDuration)
		for range tc.n - 1 {
			r.run(ok, tc.probe)
		}
		assert.Equal(t, breaker.HalfOpen, r.state(), "%d probes of %v decide nothing", tc.n-1, tc.probe)
		r.run(ok, tc.probe)
		assert.Equal(t, tc.want, r.state(), "%d probes of %v", tc.n, tc.probe)
		if tc.want == breaker.Open {
			assert.Equal(t, breaker.CauseProbeSlow, r.lastTrip())
		}
	}
}

func TestBaselinesSurviveOpenCloseResetIsolate(t *testing.T) {
	r := newRig(t, breaker.Config{BreakJitter: breaker.JitterNone, ConsecutiveFailures: 3})
	r.serve(97, ok, 10*time.Millisecond, 100*time.Millisecond)
	r.serve(3, fail, time.Millisecond, time.Millisecond) // the 100th sample trips
	require.Equal(t, breaker.Open, r.state())
	s := r.b.Snapshot()
	require.True(t, s.NormalLatencyOK)
	require.True(t, s.NormalFailureRateOK)
	assert.Equal(t, 0.03, s.NormalFailureRate)
	normals := func(s breaker.Snapshot) [4]any {
		return [4]any{s.NormalLatency, s.NormalLatencyOK, s.NormalFailureRate, s.NormalFailureRateOK}
	}
	want := normals(s)

	r.clock.Advance(conf.DefaultBreakDuration)
	r.serve(2, ok, 10*time.Millisecond, 10*time.Millisecond) // probes: feed neither baseline
	require.Equal(t, breaker.Closed, r.state())
	assert.Equal(t, want, normals(r.b.Snapshot()), "after closing")
	r.b.Isolate()
	assert.Equal(t, want, normals(r.b.Snapshot()), "after Isolate")
	r.b.Reset()
	assert.Equal(t, want, normals(r.b.Snapshot()), "after Reset")
}

// The relative trip against a quiet dependency: 200 successes make a normal
// failure rate of 0, so the trip point is the 5% floor. One failure in 20 calls
// is 5%, but a rate from one event is no rate: the second failure trips.
func TestRelativeTripAtTheFloorNeedsTwoFailures(t *testing.T) {
	r := newRig(t, breaker.Config{BreakJitter: breaker.JitterNone, TripWindow: 10 * time.Second})
	r.serve(200, ok, time.Millisecond, 100*time.Millisecond)
	rate, known := r.b.NormalFailureRate()
	require.True(t, known)
	assert.Equal(t, 0.0, rate)
	assert.Equal(t, conf.DefaultFailuresFloor, r.b.Snapshot().FailureTripPoint)

	r.clock.Advance(10 * time.Second) // an empty trip window
	r.serve(1, fail, time.Millisecond, 100*time.Millisecond)
	r.serve(19, ok, time.Millisecond, 100*time.Millisecond)
	assert.Equal(t, breaker.Closed, r.state(), "1 failure in 20 reaches 5%, but is one event")
	assert.Zero(t, r.b.Pressure(), "Pressure keeps the two-failure rule: one failure cannot trip it")
	r.serve(1, fail, time.Millisecond, 100*time.Millisecond)
	assert.Equal(t, breaker.Open, r.state(), "2 in 21")
	assert.Equal(t, breaker.CauseRelativeFailureRatio, r.lastTrip())
}

// An absolute FailureRatio alone is read as written: one failure in 20 is 5%.
func TestAbsoluteRatioAloneHasNoTwoFailureRule(t *testing.T) {
	r := newRig(t, breaker.Config{FailureRatio: 0.05, Failures: breaker.Failures{Disabled: true}})
	r.serve(19, ok, time.Millisecond, 100*time.Millisecond)
	r.serve(1, fail, time.Millisecond, 100*time.Millisecond)
	assert.Equal(t, breaker.Open, r.state())
	assert.Equal(t, breaker.CauseFailureRatio, r.lastTrip())
}

// The effective trip point, min(FailureRatio or 1, max(Floor, rate × Multiple)),
// for two dependencies and one configuration.
func TestEffectiveFailureTripPoint(t *testing.T) {
	tests := []struct {
		name         string
		failureRatio float64
		every        int // one failure every this many samples of the baseline; 0: none
		want         float64
	}{
		{"quiet dependency: the floor", 0, 0, 0.05},
		{"2% normal: 5 × 2%", 0, 50, 0.10},
		{"flaky 25% normal: capped at 1", 0, 4, 1},
		{"2% normal under an absolute 0.08: the constant is the ceiling", 0.08, 50, 0.08},
		{"quiet under an absolute 0.5: the floor tightens it", 0.5, 0, 0.05},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, breaker.Config{ConsecutiveFailures: math.MaxInt, FailureRatio: tc.failureRatio,
				MinimumCalls: math.MaxInt, SlowCalls: breaker.SlowCalls{Disabled: true}})
			for i := range 200 {
				v := ok
				if tc.every > 0 && i%tc.every == 0 {
					v = fail
				}
				r.serve(1, v, time.Millisecond, 100*time.Millisecond)
			}
			assert.InDelta(t, tc.want, r.b.Snapshot().FailureTripPoint, 1e-12)
		})
	}
}

func TestNormalFailureRateColdStartAndDecay(t *testing.T) {
	r := newRig(t, breaker.Config{ConsecutiveFailures: math.MaxInt})
	r.serve(99, ok, time.Millisecond, 100*time.Millisecond)
	_, known := r.b.NormalFailureRate()
	assert.False(t, known, "99 samples")
	assert.Equal(t, 0.0, r.b.Snapshot().FailureTripPoint, "no ratio trip armed")
	r.serve(1, throttled, time.Millisecond, 100*time.Millisecond)
	_, known = r.b.NormalFailureRate()
	assert.False(t, known, "a throttled answer is not evidence")
	r.serve(1, fail, time.Millisecond, 100*time.Millisecond)
	rate, known := r.b.NormalFailureRate()
	assert.True(t, known)
	assert.Equal(t, 0.01, rate)

	// The derived window is 2 × 30 s × 5 = 5 min: idle that long, it is gone.
	r.clock.Advance(5 * time.Minute)
	_, known = r.b.NormalFailureRate()
	assert.False(t, known)
	assert.Less(t, r.b.Pressure(), 1e-18, "only the failure run, 1 of math.MaxInt")
}

func TestPressureUsesTheRelativePoint(t *testing.T) {
	r := newRig(t, breaker.Config{ConsecutiveFailures: math.MaxInt, TripWindow: 10 * time.Second})
	r.serve(200, ok, time.Millisecond, 100*time.Millisecond)
	r.clock.Advance(10 * time.Second)
	r.serve(39, ok, time.Millisecond, 10*time.Millisecond)
	r.serve(1, fail, time.Millisecond, 10*time.Millisecond)
	assert.Less(t, r.b.Pressure(), 1e-18, "1 failure in 40: one event, which cannot trip the relative ratio")
	r.serve(39, ok, time.Millisecond, 10*time.Millisecond)
	r.serve(1, fail, time.Millisecond, 10*time.Millisecond)
	assert.Equal(t, breaker.Closed, r.state())
	assert.InDelta(t, 0.5, r.b.Pressure(), 1e-12, "2 failures in 80 are half of the 5% floor")

	r = newRig(t, breaker.Config{ConsecutiveFailures: math.MaxInt})
	r.serve(39, ok, time.Millisecond, 10*time.Millisecond)
	r.serve(1, fail, time.Millisecond, 10*time.Millisecond)
	assert.Less(t, r.b.Pressure(), 1e-18, "a disarmed baseline is no trip point")
}

func TestReadingNormalsDoesNotChangeTheBreaker(t *testing.T) {
	r := newRig(t, breaker.Config{})
	r.serve(150, ok, 10*time.Millisecond, 100*time.Millisecond)
	r.clock.Advance(3 * time.Minute) // a slice or more to expire, lazily
	before := r.b.Snapshot()
	for range 3 {
		_, _ = r.b.NormalLatency()
		_, _ = r.b.NormalFailureRate()
		_ = r.b.Pressure()
	}
	assert.Equal(t, before, r.b.Snapshot())
}

// A young breaker knows only the history it has: up 30 s, its normal would
// hold out against a brownout for 15 s, short of twice the 15 s of slow calls
// a slow-call trip needs; up a minute and more, it wins that race. The
// snapshot says which.
func TestAYoungBreakerSaysWhatItKnows(t *testing.T) {
	r := newRig(t, breaker.Config{})
	assert.Zero(t, r.b.Snapshot().NormalLatencyHeld)
	r.serve(300, ok, 10*time.Millisecond, 100*time.Millisecond) // 30 s of successes
	s := r.b.Snapshot()
	require.True(t, s.NormalLatencyOK)
	assert.InDelta(t, float64(30*time.Second), float64(s.NormalLatencyHeld), float64(conf.DefaultSlowCallsWindow/conf.BaselineSlices))
	assert.False(t, s.NormalLatencyHoldsOut, "0.5 x 30 s is short of 2 x 0.5 x 30 s")
	r.serve(400, ok, 10*time.Millisecond, 100*time.Millisecond) // 70 s up
	s = r.b.Snapshot()
	assert.True(t, s.NormalLatencyHoldsOut, "held %v", s.NormalLatencyHeld)
	r.clock.Advance(10 * time.Minute) // idle: the window forgets
	s = r.b.Snapshot()
	assert.Zero(t, s.NormalLatencyHeld)
	assert.False(t, s.NormalLatencyHoldsOut)
}

// TestAMixOfLatenciesReadsAsASlowdown records 100 successes of 1 ms, then
// successes of 100 ms, all healthy: the normal latency is the quick ones',
// and the breaker opens on slow calls once the slow answers make half the
// trip window, after 100 of them. One breaker assumes one latency; calls of
// different latencies need breakers of their own (docs/breaker.md).
func TestAMixOfLatenciesReadsAsASlowdown(t *testing.T) {
	r := newRig(t, breaker.Config{})
	r.serve(100, ok, time.Millisecond, time.Millisecond)
	n := 0
	for r.state() == breaker.Closed {
		require.Less(t, n, 1000, "never opened")
		r.run(ok, 100*time.Millisecond)
		n++
	}
	assert.Equal(t, 100, n)
	assert.Equal(t, breaker.CauseSlowCalls, r.lastTrip())
}

package simulation

import (
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/latency"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/breaker"
)

func TestSlowWindowSlidesLikeTheBreakers(t *testing.T) {
	w := newSlowWindow(30*time.Second, 10) // buckets of 3 s
	steps := []struct {
		name        string
		at          time.Duration
		slow        bool
		calls, slws int
	}{
		{"first sample, bucket 0", 0, true, 1, 1},
		{"same bucket", 2999 * time.Millisecond, false, 2, 1},
		{"bucket 1", 3 * time.Second, false, 3, 1},
		{"bucket 9: the window is buckets 0 to 9", 29 * time.Second, true, 4, 2},
		{"bucket 10: bucket 0 leaves", 30 * time.Second, false, 3, 1},
		{"bucket 12: bucket 1 leaves, 2 was empty", 36 * time.Second, true, 3, 2},
		{"bucket 22: a window after bucket 12, all but it left", 66 * time.Second, false, 1, 0},
		{"a gap of more than the window", 200 * time.Second, true, 1, 1},
	}
	for _, s := range steps {
		calls, slow := w.add(s.at, s.slow)
		assert.Equal(t, s.calls, calls, s.name)
		assert.Equal(t, s.slws, slow, s.name)
	}
	w.reset()
	calls, slow := w.add(201*time.Second, false)
	assert.Equal(t, []int{1, 0}, []int{calls, slow}, "reset empties the window where it stands")
	calls, slow = w.add(231*time.Second, true)
	assert.Equal(t, []int{1, 1}, []int{calls, slow}, "the sample after the reset leaves a window later")
}

func TestSlowJudgeByQuantile(t *testing.T) {
	clock := clockwork.NewFakeClock()
	g, err := newJudge(&SlowJudge{Quantile: 0.9, MinSamples: 5}, nil, clock)
	require.NoError(t, err)
	est, err := latency.New(latency.Config{Clock: clock}) // the same estimator, fed by the test
	require.NoError(t, err)
	ok := outcome.Verdict{Kind: outcome.OK}
	failed := outcome.Verdict{Kind: outcome.Transient}

	now := time.Duration(0)
	for i := range 4 {
		now += 10 * time.Millisecond
		j, seen := g.judge(now, ok, time.Second, nil)
		require.True(t, seen)
		assert.Zero(t, j.threshold, "sample %d: not armed before 5 successes", i)
		assert.False(t, j.slow, "sample %d: nothing is slow before the threshold is armed", i)
		est.Record(now, time.Second)
	}
	// A failure is judged but not measured.
	j, seen := g.judge(now, failed, time.Hour, nil)
	require.True(t, seen)
	assert.False(t, j.slow)
	for i, d := range []time.Duration{time.Second, 2 * time.Second, 100 * time.Millisecond, 3 * time.Second, 2 * time.Second} {
		now += 10 * time.Millisecond
		want, n := est.Quantile(now, 0.9) // read before the sample joins
		j, seen := g.judge(now, ok, d, nil)
		require.True(t, seen)
		require.GreaterOrEqual(t, n, 4)
		if n < 5 {
			want = 0
		}
		assert.Equal(t, want, j.threshold, "sample %d", i)
		assert.Equal(t, want > 0 && d > want, j.slow, "sample %d", i)
		est.Record(now, d)
	}
	// Throttled, Permanent, self-imposed and cancelled outcomes are not
	// evidence: the breaker's window never sees them, nor does the judge.
	for _, v := range []outcome.Verdict{
		{Kind: outcome.Throttled}, {Kind: outcome.Permanent},
		{Kind: outcome.Transient, SelfImposed: true}, {Kind: outcome.OK, Canceled: true},
	} {
		_, seen := g.judge(now, v, time.Hour, nil)
		assert.False(t, seen, "%+v", v)
	}
}

func TestSlowJudgeByConstantCountsTheTripWindow(t *testing.T) {
	g, err := newJudge(&SlowJudge{Threshold: 100 * time.Millisecond}, &breaker.Config{MinimumCalls: 4, SlowCallRatio: 0.75}, nil)
	require.NoError(t, err)
	ok := outcome.Verdict{Kind: outcome.OK}
	steps := []struct {
		took              time.Duration
		slow, counted, tr bool
		fraction          float64
	}{
		{100 * time.Millisecond, false, false, false, 0},    // not above the threshold
		{100*time.Millisecond + 1, true, false, false, 0.5}, // above it, but 2 samples
		{time.Second, true, false, false, 2.0 / 3},          // 3 samples
		{time.Second, true, true, true, 0.75},               // 4 samples, 3 slow: it trips
		{time.Millisecond, false, true, false, 0.6},         // 5 samples, 3 slow
		{time.Minute, true, true, false, 4.0 / 6},           // 6 samples, 4 slow: under 0.75
	}
	for i, s := range steps {
		j, seen := g.judge(time.Duration(i)*time.Millisecond, ok, s.took, nil)
		require.True(t, seen)
		assert.Equal(t, 100*time.Millisecond, j.threshold, "step %d", i)
		assert.Equal(t, s.slow, j.slow, "step %d", i)
		assert.Equal(t, s.counted, j.counted, "step %d", i)
		assert.InDelta(t, s.fraction, j.fraction, 1e-12, "step %d", i)
		assert.Equal(t, s.tr, j.trips, "step %d", i)
	}
}

// judgedRun runs c with a hook on every attempt the breaker records, and
// returns, per attempt the judge was shown, what it made of it and the
// transitions the breaker made while recording it (and since the previous
// one: admissions move a breaker too).
func judgedRun(t require.TestingT, c Config) (*Report, []judgement, []bool, [][]breaker.Transition) {
	s, err := newSim(c)
	require.NoError(t, err)
	var (
		js      []judgement
		seen    []bool
		changes [][]breaker.Transition
		since   []breaker.Transition
	)
	s.rec.onEvent = func(e pipeline.Event) {
		if tr, ok := e.(breaker.Transition); ok {
			since = append(since, tr)
		}
	}
	s.onJudged = func(j judgement, ok bool) {
		js, seen, changes = append(js, j), append(seen, ok), append(changes, since)
		since = nil
	}
	s.schedule()
	s.run()
	s.rec.until(max(s.Now, c.Duration))
	return s.rec.report(), js, seen, changes
}

// TestSlowJudgeMatchesTheBreaker holds the judge's trip window to the
// breaker's: a judge reading the breaker's own threshold (or the same constant)
// reaches the slow-call ratio on exactly the samples on which the real breaker
// opens for slow calls, over random breakers and dependencies that brown out
// and fail, through every trip, probe, close and recovery ramp. A ramp's
// samples never reach the trip window, slow or not; the sample that finds a
// ramp run out closes the breaker and is its first closed-state sample.
func TestSlowJudgeMatchesTheBreaker(t *testing.T) {
	trips, ramps, closings := 0, 0, 0
	rapid.Check(t, func(rt *rapid.T) {
		bc := breaker.Config{
			TripWindow:    time.Duration(rapid.IntRange(2, 40).Draw(rt, "tripSeconds")) * time.Second,
			WindowBuckets: rapid.IntRange(1, 20).Draw(rt, "buckets"),
			MinimumCalls:  rapid.IntRange(1, 60).Draw(rt, "minimumCalls"),
			SlowCallRatio: rapid.Float64Range(0.1, 1).Draw(rt, "slowRatio"),
			BreakDuration: time.Duration(rapid.IntRange(1, 5).Draw(rt, "breakSeconds")) * time.Second,
			SlowCalls: breaker.SlowCalls{
				Multiple:       rapid.Float64Range(1.2, 4).Draw(rt, "multiple"),
				MinimumSamples: rapid.IntRange(1, 50).Draw(rt, "minimumSamples"),
			},
		}
		if rapid.Bool().Draw(rt, "ramp") {
			bc.Recovery = &breaker.Recovery{
				Fraction: rapid.Float64Range(0.05, 1).Draw(rt, "rampFraction"),
				Initial:  rapid.Float64Range(0.01, 0.5).Draw(rt, "rampInitial"),
				Minimum:  time.Duration(rapid.IntRange(100, 3000).Draw(rt, "rampMinimumMillis")) * time.Millisecond,
			}
		}
		judge := SlowJudge{}
		if rapid.Bool().Draw(rt, "constant") {
			bc.SlowCallThreshold = time.Duration(rapid.IntRange(20, 200).Draw(rt, "thresholdMillis")) * time.Millisecond
			switch rapid.IntRange(0, 2).Draw(rt, "measured") {
			case 0: // the constant alone, judged by the same constant
				bc.SlowCalls = breaker.SlowCalls{Disabled: true}
				judge.Threshold = bc.SlowCallThreshold
			case 1: // the constant alone, judged by the breaker's threshold
				bc.SlowCalls = breaker.SlowCalls{Disabled: true}
			}
		}
		var m Model = Healthy{P50: 20 * time.Millisecond, P99: time.Duration(rapid.IntRange(20, 200).Draw(rt, "p99Millis")) * time.Millisecond}
		for range rapid.IntRange(1, 3).Draw(rt, "brownouts") {
			from := time.Duration(rapid.IntRange(0, 50).Draw(rt, "from")) * time.Second
			m = Brownout{Base: m, From: from, To: from + time.Duration(rapid.IntRange(1, 20).Draw(rt, "length"))*time.Second,
				Factor: rapid.Float64Range(1, 20).Draw(rt, "factor")}
		}
		if rapid.Bool().Draw(rt, "failures") {
			m = FailingFraction{Base: m, Fraction: rapid.Float64Range(0.01, 0.5).Draw(rt, "fraction"),
				From: 20 * time.Second, To: 30 * time.Second}
		}
		c := Config{
			Seed:       rapid.Uint64().Draw(rt, "seed"),
			Duration:   60 * time.Second,
			Rate:       float64(rapid.IntRange(5, 100).Draw(rt, "rate")),
			Dependency: m,
			Client:     Client{Breaker: &bc, SlowJudge: &judge},
		}
		if rapid.Bool().Draw(rt, "retry") {
			c.Client.Retry = &Retry{}
		}
		r, js, seen, changes := judgedRun(rt, c)
		slowOpens := 0
		for k, j := range js {
			slowOpen, opened := false, false
			for _, tr := range changes[k] {
				switch {
				case tr.To == breaker.Recovering:
					ramps++
				case tr.From == breaker.Recovering && tr.To == breaker.Closed && seen[k]:
					closings++ // this sample found the ramp run out
				}
				if tr.To == breaker.Open {
					opened = true
					slowOpen = slowOpen || tr.Cause == breaker.CauseSlowCalls
					if tr.From == breaker.Recovering && tr.Cause != breaker.CauseRampFailed {
						rt.Fatalf("sample %d: a ramp re-opened for %v", k, tr.Cause)
					}
				}
			}
			if slowOpen {
				slowOpens++
			}
			if slowOpen && !(seen[k] && j.trips) {
				rt.Fatalf("sample %d: the breaker opened for slow calls, the judge (%+v, seen %v) did not trip", k, j, seen[k])
			}
			if j.trips && !opened {
				rt.Fatalf("sample %d: the judge tripped (%+v), the breaker did not open", k, j)
			}
		}
		if slowOpens > 0 {
			if r.FirstOpenCause == breaker.CauseSlowCalls {
				assert.Equal(rt, r.FirstOpen, r.SlowTripAt, "the first open is the judge's first trip")
			}
			assert.True(rt, r.SlowTrip)
		}
		trips += slowOpens

		// The judge changes nothing: without it the run is the same. Nor do
		// the reads of a recovering breaker for the ramp's figures, when the
		// run makes them.
		c.Client.SlowJudge = nil
		plain, err := Run(c)
		require.NoError(rt, err)
		assert.Equal(rt, plain.Served, r.Served)
		assert.Equal(rt, plain.Attempts, r.Attempts)
		assert.Equal(rt, plain.BreakerOpens, r.BreakerOpens)
		assert.Equal(rt, plain.FirstOpen, r.FirstOpen)
		assert.Equal(rt, plain.latencies, r.latencies)
		if rampFigures(c.Client.Breaker) {
			unread := runUnread(rt, c)
			assert.Equal(rt, plain.latencies, unread.latencies)
			assert.Equal(rt, plain.BreakerOpens, unread.BreakerOpens)
			assert.Equal(rt, plain.Ramps, unread.Ramps)
			assert.Zero(rt, unreadRamping(unread))
		}
	})
	assert.Positive(t, trips, "the random runs trip on slow calls")
	assert.Positive(t, ramps, "the random runs ramp")
	assert.Positive(t, closings, "samples find a ramp run out")
	t.Logf("%d opens for slow calls, each matched by the judge; %d ramps, %d closed by a judged sample", trips, ramps, closings)
}

func TestSlowJudgeInARun(t *testing.T) {
	// A constant judge without a breaker: a dependency browned out 10x from 10 s
	// on, judged against 100 ms over the default trip window (30 s in 3 s
	// buckets, 20 samples, 0.5).
	r, err := Run(Config{Seed: 1, Duration: 40 * time.Second, Rate: 50,
		Dependency: Brownout{From: 10 * time.Second, Factor: 10},
		Client:     Client{SlowJudge: &SlowJudge{Threshold: 100 * time.Millisecond}}})
	require.NoError(t, err)
	assert.Equal(t, r.Offered, r.Judged, "every call is a sample: there is no breaker to open")
	require.True(t, r.SlowTrip)
	assert.Greater(t, r.SlowTripAt, 10*time.Second)
	assert.LessOrEqual(t, r.SlowTripAt, 40*time.Second)
	assert.Zero(t, r.BreakerOpens)
	assert.Equal(t, 0.5, r.SlowCallRatio)
	judged, slow := 0, 0
	for i, s := range r.Seconds {
		judged, slow = judged+s.Judged, slow+s.Slow
		if s.Judged > 0 {
			assert.Equal(t, 100*time.Millisecond, s.Threshold, "second %d", i)
		}
	}
	assert.Equal(t, r.Judged, judged)
	assert.Equal(t, r.Slow, slow)
	assert.Less(t, r.Seconds[5].SlowFraction, 0.05, "healthy: about 1% over the p99")
	assert.Greater(t, r.Seconds[39].SlowFraction, 0.5, "browned out: most over it")
	assert.GreaterOrEqual(t, r.PeakSlowFraction, r.Seconds[39].SlowFraction)

	// The judge changes nothing about the calls: the same run without it gives
	// the same calls, attempts and latencies.
	plain, err := Run(Config{Seed: 1, Duration: 40 * time.Second, Rate: 50, Dependency: Brownout{From: 10 * time.Second, Factor: 10}})
	require.NoError(t, err)
	assert.Equal(t, plain.Served, r.Served)
	assert.Equal(t, plain.Attempts, r.Attempts)
	assert.Equal(t, plain.latencies, r.latencies)
}

func TestSlowJudgeRefusesImpossibleSettings(t *testing.T) {
	base := Config{Duration: time.Second, Rate: 1, Dependency: Healthy{}}
	c := base
	c.Client.SlowJudge = &SlowJudge{Quantile: 1.5, Threshold: -1, MinSamples: -1, Window: -time.Second}
	err := c.Validate()
	require.Error(t, err)
	for _, want := range []string{
		"simulation: Client.SlowJudge.Quantile must lie in (0, 1] (0 means none), got 1.5",
		"simulation: Client.SlowJudge.Threshold must not be negative (0 means none), got -1ns",
		"simulation: Client.SlowJudge.Quantile (1.5) and Client.SlowJudge.Threshold (-1ns) must not both be set",
		"simulation: Client.SlowJudge.MinSamples must not be negative, got -1",
		"simulation: Client.SlowJudge: latency: Config.Window must not be negative",
	} {
		assert.Contains(t, err.Error(), want)
	}
	c.Client.SlowJudge = &SlowJudge{}
	assert.EqualError(t, c.Validate(), "simulation: Client.Breaker is required by a Client.SlowJudge with neither Quantile nor Threshold (it judges by the breaker's threshold), got nil")
	c.Client.Breaker = &breaker.Config{}
	assert.NoError(t, c.Validate())
	c.Client.SlowJudge = &SlowJudge{Quantile: 0.99}
	c.Client.Breaker = nil
	assert.NoError(t, c.Validate(), "a quantile judge needs no breaker")
	_, err = Run(c)
	assert.NoError(t, err)
}

// runUnread runs c without reading the recovering breakers for the ramp's
// figures.
func runUnread(t require.TestingT, c Config) *Report {
	s, err := newSim(c)
	require.NoError(t, err)
	s.rampFigures = false
	s.schedule()
	s.run()
	s.rec.until(max(s.Now, c.Duration))
	return s.rec.report()
}

// unreadRamping counts the attempts r records as offered to a ramp.
func unreadRamping(r *Report) int {
	n := 0
	for _, s := range r.Seconds {
		n += s.Ramping
	}
	return n
}

// TestReadingTheBreakerDoesNotChangeTheRun replays a run the parity test found
// while a breaker judging a sample above its constant threshold skipped reading
// its latency baseline: a breaker with both a constant threshold and a measured
// normal, where the judge's Snapshot before every sample refreshed the
// baseline's memoized median at another moment than the breaker would, and
// changed which call opened the breaker. The breaker now reads its baseline on
// every judgement, and the run with the judge is the run without it.
func TestReadingTheBreakerDoesNotChangeTheRun(t *testing.T) {
	var m Model = Healthy{P50: 20 * time.Millisecond, P99: 200 * time.Millisecond}
	m = Brownout{Base: m, From: 7 * time.Second, To: 13 * time.Second, Factor: 3.32}
	m = Brownout{Base: m, From: 13 * time.Second, To: 17 * time.Second, Factor: 2.71}
	c := Config{Seed: 0x8b094f907, Duration: 20 * time.Second, Rate: 5, Dependency: m,
		Client: Client{Breaker: &breaker.Config{
			TripWindow: 8 * time.Second, WindowBuckets: 5, MinimumCalls: 11, SlowCallRatio: 0.1188, BreakDuration: 5 * time.Second,
			SlowCallThreshold: 177 * time.Millisecond, SlowCalls: breaker.SlowCalls{Multiple: 2.98, MinimumSamples: 49},
		}}}
	plain, err := Run(c)
	require.NoError(t, err)
	require.Equal(t, breaker.CauseSlowCalls, plain.FirstOpenCause)

	c.Client.SlowJudge = &SlowJudge{}
	judged, err := Run(c)
	require.NoError(t, err)
	assert.Equal(t, plain.FirstOpen, judged.FirstOpen)
	assert.Equal(t, plain.latencies, judged.latencies)
	assert.Equal(t, judged.FirstOpen, judged.SlowTripAt)
	assert.Positive(t, judged.Slow)
}

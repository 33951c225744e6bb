package breaker_test

import (
	"context"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	conf "github.com/resilience-go/pipeline/internal/breakerconf"
	"github.com/resilience-go/pipeline/policy/breaker"
)

// fuzzConfig is every count and duration field of a breaker.Config, in the
// order FuzzConfig takes them, ProbeSlowFraction, and the switches that decide
// which of them matter.
type fuzzConfig struct {
	// counts
	consecutive, minimumCalls, buckets, probes, probeSuccesses, probeSlowLead, slowSamples, failSamples int64
	// durations
	tripWindow, slowThreshold, breakDuration, maxBreak, slowWindow, failWindow, rampMin, rampMax int64
	// the one fraction
	probeFraction float64
	// switches
	ramp, slowOff, failOff bool
	jitter                 uint8
}

// fuzzFields is how many count and duration fields fuzzConfig has.
const fuzzFields = 16

func (c *fuzzConfig) field(i int) *int64 {
	return [fuzzFields]*int64{
		&c.consecutive, &c.minimumCalls, &c.buckets, &c.probes, &c.probeSuccesses, &c.probeSlowLead, &c.slowSamples, &c.failSamples,
		&c.tripWindow, &c.slowThreshold, &c.breakDuration, &c.maxBreak, &c.slowWindow, &c.failWindow, &c.rampMin, &c.rampMax,
	}[i]
}

func (c fuzzConfig) with(i int, v int64) fuzzConfig {
	*c.field(i) = v
	return c
}

// add adds c to f's seed corpus.
func (c fuzzConfig) add(f *testing.F) {
	f.Add(c.consecutive, c.minimumCalls, c.buckets, c.probes, c.probeSuccesses, c.probeSlowLead, c.slowSamples, c.failSamples,
		c.tripWindow, c.slowThreshold, c.breakDuration, c.maxBreak, c.slowWindow, c.failWindow, c.rampMin, c.rampMax,
		c.probeFraction, c.ramp, c.slowOff, c.failOff, c.jitter)
}

func (c fuzzConfig) config(clock clockwork.Clock) breaker.Config {
	cfg := breaker.Config{
		ConsecutiveFailures: int(c.consecutive),
		MinimumCalls:        int(c.minimumCalls),
		WindowBuckets:       int(c.buckets),
		HalfOpenProbes:      int(c.probes),
		ProbeSuccesses:      int(c.probeSuccesses),
		ProbeSlowLead:       int(c.probeSlowLead),
		ProbeSlowFraction:   c.probeFraction,
		TripWindow:          time.Duration(c.tripWindow),
		SlowCallThreshold:   time.Duration(c.slowThreshold),
		BreakDuration:       time.Duration(c.breakDuration),
		MaxBreakDuration:    time.Duration(c.maxBreak),
		BreakJitter:         breaker.Jitter(c.jitter),
		SlowCalls: breaker.SlowCalls{
			Disabled:       c.slowOff,
			Window:         time.Duration(c.slowWindow),
			MinimumSamples: int(c.slowSamples),
		},
		Failures: breaker.Failures{
			Disabled:       c.failOff,
			Window:         time.Duration(c.failWindow),
			MinimumSamples: int(c.failSamples),
		},
		Clock:   clock,
		Rand:    rand.NewPCG(1, 2),
		OnEvent: func(context.Context, pipeline.Source, pipeline.Event) {},
	}
	if c.ramp {
		cfg.Recovery = &breaker.Recovery{Minimum: time.Duration(c.rampMin), Maximum: time.Duration(c.rampMax)}
	}
	return cfg
}

// maxNewBytes is the most New may allocate for one breaker: the largest valid
// configuration needs a few tens of kilobytes.
const maxNewBytes = 4 << 20

// FuzzConfig fuzzes every count and duration field of breaker.Config, and
// ProbeSlowFraction, at their extremes. Validate never panics and agrees with New; New never allocates
// more than maxNewBytes; and a built breaker survives a scripted trip, break and
// probe: after the trip it reads Open until its whole break has passed on the
// clock, never HalfOpen at once (an overflowing break end did that), and the
// refusals of a recovery ramp carry the time left in it.
func FuzzConfig(f *testing.F) {
	extremes := []int64{
		0, 1, -1, 2, 10, math.MaxInt64, math.MinInt64, math.MaxInt32, math.MinInt32, 1 << 24, 1 << 40,
		int64(time.Hour), int64(100 * 365 * 24 * time.Hour), math.MaxInt64 / 2, math.MaxInt64/2 + 1,
		int64(breaker.MaxDuration), int64(breaker.MaxDuration) + 1, conf.MaxHalfOpenProbes, conf.MaxHalfOpenProbes + 1,
	}
	fractions := []float64{0, 1e-300, 0.5, conf.DefaultProbeSlowFraction, math.Nextafter(1, 0), 1, math.Nextafter(1, 2),
		-0.1, math.Inf(1), math.Inf(-1), math.NaN()}
	bases := []fuzzConfig{
		{jitter: uint8(breaker.JitterNone)},
		{jitter: uint8(breaker.JitterNone), ramp: true},
		{jitter: uint8(breaker.JitterNone), ramp: true, slowOff: true, failOff: true, consecutive: 1, probeSuccesses: 1, probeSlowLead: 1},
		{jitter: uint8(breaker.JitterEqual), consecutive: 3},
		{jitter: uint8(breaker.JitterFull), ramp: true, slowOff: true},
	}
	for _, base := range bases {
		base.add(f)
		for i := range fuzzFields {
			for _, v := range extremes {
				base.with(i, v).add(f)
			}
		}
		for _, v := range fractions {
			c := base
			c.probeFraction = v
			c.add(f)
		}
		for _, v := range extremes { // every field at once
			c := base
			for i := range fuzzFields {
				c = c.with(i, v)
			}
			c.add(f)
		}
	}
	f.Fuzz(func(t *testing.T, consecutive, minimumCalls, buckets, probes, probeSuccesses, probeSlowLead, slowSamples, failSamples,
		tripWindow, slowThreshold, breakDuration, maxBreak, slowWindow, failWindow, rampMin, rampMax int64,
		probeFraction float64, ramp, slowOff, failOff bool, jitter uint8) {
		c := fuzzConfig{
			consecutive, minimumCalls, buckets, probes, probeSuccesses, probeSlowLead, slowSamples, failSamples,
			tripWindow, slowThreshold, breakDuration, maxBreak, slowWindow, failWindow, rampMin, rampMax,
			probeFraction, ramp, slowOff, failOff, jitter,
		}
		clock := clockwork.NewFakeClockAt(epoch)
		cfg := c.config(clock)
		verr := cfg.Validate()
		b, allocated, err := newCounted(cfg)
		require.Equal(t, verr == nil, err == nil, "Validate said %v, New said %v", verr, err)
		if err != nil {
			for line := range strings.SplitSeq(err.Error(), "\n") {
				require.True(t, strings.HasPrefix(line, "breaker: Config."), "%q names no field", line)
			}
			return
		}
		require.LessOrEqual(t, allocated, uint64(maxNewBytes), "New allocated %d bytes", allocated)
		scriptTripBreakProbe(t, b, clock)
	})
}

// newCounted calls New and returns what it allocated, in bytes.
func newCounted(cfg breaker.Config) (*breaker.Breaker, uint64, error) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	b, err := breaker.New(cfg)
	runtime.ReadMemStats(&after)
	return b, after.TotalAlloc - before.TotalAlloc, err
}

// scriptTripBreakProbe fails attempts a millisecond apart until b trips (a
// breaker that only trips on what the script cannot reach is left alone), then
// checks the break, waits it out, and sends a successful probe, and a few more
// attempts if that started a recovery ramp.
func scriptTripBreakProbe(t *testing.T, b *breaker.Breaker, clock *clockwork.FakeClock) {
	for range 64 {
		clock.Advance(time.Millisecond)
		tk, err := b.Admit()
		require.NoError(t, err, "a closed breaker admits")
		b.Done(tk, fail)
		if b.Snapshot().Trips > 0 {
			break
		}
	}
	s := b.Snapshot()
	if s.Trips == 0 {
		return
	}
	require.Equal(t, 1, s.Trips)
	require.Positive(t, s.Nominal)
	require.LessOrEqual(t, s.Break, s.Nominal, "jitter never lengthens a break")
	require.GreaterOrEqual(t, s.Break, time.Duration(0))
	require.Truef(t, clock.Now().Add(s.Break).Equal(s.BreakEnds),
		"the break ends one served break after the trip: %v, not %v", clock.Now().Add(s.Break), s.BreakEnds)
	if s.Break > 0 {
		require.Equal(t, breaker.Open, s.State, "a breaker with a break to serve reads Open after its trip")
		clock.Advance(s.Break - 1)
		require.Equal(t, breaker.Open, b.State(), "still Open a nanosecond before its break ends")
		if tk, err := b.Admit(); err == nil {
			require.True(t, tk.Probe(), "an Open breaker refuses, unless its trickle lets a probe through")
			b.Done(tk, fail)
			require.Equal(t, breaker.Open, b.State(), "a failed trickle probe changes nothing")
		}
		clock.Advance(1)
	}
	require.Equal(t, breaker.HalfOpen, b.State(), "the break has passed")

	tk, err := b.Admit()
	require.NoError(t, err, "the first attempt after the break is a probe")
	require.True(t, tk.Probe())
	b.Done(tk, ok) // it took no time on the clock, so it is neither slow nor expired
	s = b.Snapshot()
	require.Zero(t, s.Probes, "the probe's outcome freed its slot")
	switch s.State {
	case breaker.HalfOpen:
		require.Equal(t, 1, s.ProbeSuccesses)
	case breaker.Closed, breaker.Recovering:
	default:
		require.Failf(t, "a successful probe does not leave the breaker", "%v", s.State)
	}

	for range 8 { // a recovery ramp's refusals carry no hint
		if s.State != breaker.Recovering {
			return
		}
		tk, err := b.Admit()
		if err != nil {
			var se *pipeline.StopError
			require.ErrorAs(t, err, &se)
			assert.Zero(t, se.RetryAfter, "a ramp's refusal aims its caller at no instant")
		} else {
			b.Done(tk, ok)
		}
		clock.Advance(time.Millisecond)
		s = b.Snapshot()
	}
}

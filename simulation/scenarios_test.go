package simulation

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline/budget"
	"github.com/resilience-go/pipeline/policy/breaker"
)

// runScenario runs the built-in scenario name with the default seed.
func runScenario(t *testing.T, name string) []*Report {
	t.Helper()
	s, ok := Lookup(name)
	require.True(t, ok, name)
	rs, err := s.Run(DefaultSeed)
	require.NoError(t, err)
	for _, r := range rs {
		t.Log("\n" + r.String())
	}
	return rs
}

// offeredIn sums the calls offered over the seconds [from, to).
func offeredIn(r *Report, from, to time.Duration) int {
	n := 0
	for _, s := range r.Seconds[from/time.Second : to/time.Second] {
		n += s.Offered
	}
	return n
}

func TestScenarioRetryStorm(t *testing.T) {
	rs := runScenario(t, "retry-storm")
	require.Len(t, rs, 2)
	without, with := rs[0], rs[1]
	offered := offeredIn(without, stormFrom, stormTo)
	require.Equal(t, stormRate*int((stormTo-stormFrom)/time.Second), offered)

	// Without a budget every call offered during the failure makes its three
	// attempts; the calls offered in its last backoffs retry after it ends, so
	// the multiplier is a little under 3.
	assert.InDelta(t, 3, without.FaultAmplification, 0.02)
	assert.Zero(t, without.RefusedByBudget)

	// With the default budget, the retries sent during the failure are paid by
	// the bucket, full (30 tokens) when the failure starts, and its refill (3 a
	// second for 30 s); no attempt succeeds, so nothing is deposited. Attempts
	// = first attempts (one per call offered) + retries <= offered + 30 + 90.
	capacity := budget.DefaultRefillPerSecond * budget.DefaultHorizon.Seconds()
	retries := capacity + budget.DefaultRefillPerSecond*(stormTo-stormFrom).Seconds()
	bound := 1 + retries/float64(offered)
	assert.LessOrEqual(t, with.FaultAmplification, bound)
	assert.Greater(t, with.FaultAmplification, 1+(retries-10)/float64(offered), "the budget is spent, not idle")
	assert.Positive(t, with.RefusedByBudget)
	t.Logf("load multiplier during the failure: %.4f without a budget, %.4f with (bound %.4f)", without.FaultAmplification, with.FaultAmplification, bound)

	// The worst second with a budget is the first of the failure: 100 first
	// attempts and the full bucket's 30 retries, plus a refill of about 3.
	assert.Equal(t, int(stormFrom/time.Second), with.WorstSecond)
	assert.InDelta(t, 1+(capacity+budget.DefaultRefillPerSecond)/stormRate, with.WorstAmplification, 0.02)
	// Outside the failure nothing is lost either way. Without a budget, the
	// calls offered in the failure's last 300 ms (at most 30) may be saved by a
	// retry after it ends.
	assert.GreaterOrEqual(t, without.Served, without.Offered-offered)
	assert.LessOrEqual(t, without.Served, without.Offered-offered+30)
	assert.GreaterOrEqual(t, with.Served, with.Offered-offered)
}

func TestScenarioSynchronizedProbe(t *testing.T) {
	rs := runScenario(t, "synchronized-probe")
	require.Len(t, rs, 2)
	none, equal := rs[0], rs[1]

	// Each process offers a call every 200 ms from a phase f0 in [0, 0.2 s).
	// Its first call in the outage, at f in [10, 10.2) s, fails three times
	// (backoffs of at most 100 and 200 ms), and its next call, at f + 0.2 s,
	// fails once or twice more: the fifth failure in a row opens the breaker at
	// some o in (f + 0.2, f + 0.41) s. The first attempt admitted after the
	// break b is the probe: the process's next call after o + b.
	//
	// Without jitter b = 15 s, so every probe lands in [f + 15.4, f + 15.6]:
	// all 200 in [25.4, 25.8) s, at least 50 in one of those four 100 ms buckets.
	firstRound := func(r *Report, from, to time.Duration) int {
		n := 0
		for i := from / ProbeBucket; i < to/ProbeBucket; i++ {
			n += r.ProbeSeries[i]
		}
		return n
	}
	assert.Equal(t, probeProcesses, firstRound(none, 25400*time.Millisecond, 25800*time.Millisecond))
	assert.Zero(t, firstRound(none, 0, 25400*time.Millisecond))
	assert.GreaterOrEqual(t, none.PeakProbes, probeProcesses/4)

	// With equal jitter b is drawn from [7.5, 15] s, so the probes spread over
	// [17.7, 25.8) s: 200 over 7.5 s is 2.7 per 100 ms on average. A bucket of
	// more than 10 would be a 1-in-10,000 draw.
	assert.Equal(t, probeProcesses, firstRound(equal, 17700*time.Millisecond, 25800*time.Millisecond))
	assert.Zero(t, firstRound(equal, 0, 17700*time.Millisecond))
	assert.LessOrEqual(t, equal.PeakProbes, 10)
	busy := 0
	for _, n := range equal.ProbeSeries[177:258] {
		if n > 0 {
			busy++
		}
	}
	assert.Greater(t, busy, 50, "probes arrive in most of the 81 buckets")
	t.Logf("peak probes per 100 ms: %d without jitter, %d with equal jitter", none.PeakProbes, equal.PeakProbes)

	// The first probes all fail (the outage lasts until 30 s) and reopen every
	// breaker with a doubled break; the second probes come after 30 s and
	// close them: two opens per process in both variants.
	for _, r := range rs {
		assert.Equal(t, 2*probeProcesses, r.BreakerOpens, r.Name)
		assert.True(t, r.Stable, r.Name)
	}
	// Without jitter the second break is exactly 30 s: the fleet recovers only
	// at about 55.4 s; with jitter some processes recover from 32.7 s on.
	assert.Less(t, equal.TimeToRecover, none.TimeToRecover)
	assert.Greater(t, equal.Served, none.Served)
}

func TestScenarioColdStart(t *testing.T) {
	rs := runScenario(t, "cold-start")
	require.Len(t, rs, 3)
	warm, light, full := rs[0], rs[1], rs[2]
	assert.Equal(t, 1.0, warm.Availability, "a warm dependency serves 60 a second")
	assert.Equal(t, 1.0, light.Availability, "a cold one offered less than its cold capacity serves everything")
	// Offered 60 a second, a cold dependency (20 a second) is knocked back and
	// stays cold: it serves about a third.
	assert.InDelta(t, float64(coldCapacity)*DefaultCold/coldFull, full.Availability, 0.03)
	served := 0
	for _, s := range full.Seconds[10:60] {
		served += s.Served
	}
	assert.InDelta(t, coldCapacity*DefaultCold, float64(served)/50, 2, "served per second from 10 s on")
}

func TestScenariosList(t *testing.T) {
	var names []string
	for _, s := range Scenarios() {
		names = append(names, s.Name)
		assert.NotEmpty(t, s.Claim, s.Name)
		if s.Pending != "" {
			_, err := s.Run(DefaultSeed)
			assert.ErrorContains(t, err, "cannot run yet", s.Name)
			continue
		}
		require.NotNil(t, s.Variants, s.Name)
		for _, c := range s.Variants(DefaultSeed) {
			assert.NoError(t, c.Validate(), c.Name)
			assert.Equal(t, uint64(DefaultSeed), c.Seed)
		}
	}
	assert.Equal(t, []string{"retry-storm", "synchronized-probe", "cold-start", "slow-call-trip", "ramp-vs-cliff"}, names)
	_, ok := Lookup("no-such")
	assert.False(t, ok)
	// The probe scenario's breakers are the defaults but for the jitter.
	s, _ := Lookup("synchronized-probe")
	v := s.Variants(3)
	assert.Equal(t, breaker.JitterNone, v[0].Client.Breaker.BreakJitter)
	assert.Equal(t, breaker.JitterEqual, v[1].Client.Breaker.BreakJitter)
}

package simulation

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline/internal/breakerconf"
	"github.com/resilience-go/pipeline/internal/hedgerule"
	"github.com/resilience-go/pipeline/latency"
	"github.com/resilience-go/pipeline/policy/breaker"
)

// runScenario runs the built-in scenario name with the default seed.
func runScenario(t *testing.T, name string) []*Report {
	t.Helper()
	s, ok := lookup(name)
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
	const refill, horizon = 3.0, 10 // the budget's defaults: tokens a second, seconds
	capacity := refill * horizon
	retries := capacity + refill*(stormTo-stormFrom).Seconds()
	bound := 1 + retries/float64(offered)
	assert.LessOrEqual(t, with.FaultAmplification, bound)
	assert.Greater(t, with.FaultAmplification, 1+(retries-10)/float64(offered), "the budget is spent, not idle")
	assert.Positive(t, with.RefusedByBudget)
	t.Logf("load multiplier during the failure: %.4f without a budget, %.4f with (bound %.4f)", without.FaultAmplification, with.FaultAmplification, bound)

	// The worst second with a budget is the first of the failure: 100 first
	// attempts and the full bucket's 30 retries, plus a refill of about 3.
	assert.Equal(t, int(stormFrom/time.Second), with.WorstSecond)
	assert.InDelta(t, 1+(capacity+refill)/stormRate, with.WorstAmplification, 0.02)
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
		for i := from / probeBucket; i < to/probeBucket; i++ {
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
	assert.InDelta(t, float64(coldCapacity)*defaultCold/coldFull, full.Availability, 0.03)
	served := 0
	for _, s := range full.Seconds[10:60] {
		served += s.Served
	}
	assert.InDelta(t, coldCapacity*defaultCold, float64(served)/50, 2, "served per second from 10 s on")
}

func TestScenarioHedging(t *testing.T) {
	rs := runScenario(t, "hedging")
	require.Len(t, rs, 2)
	without, with := rs[0], rs[1]
	model := fitted(hedgingLatency)
	calls := float64(with.Offered)
	require.Equal(t, hedgingRate*int(hedgingDuration/time.Second), with.Offered)

	// Nothing fails, so nothing is retried, refused or lost either way, and
	// every attempt beyond the first of a call is a hedge.
	for _, r := range rs {
		assert.Equal(t, r.Offered, r.Served, r.Name)
		assert.Zero(t, r.BreakerOpens, r.Name)
		assert.Equal(t, r.Offered+r.HedgesSent, r.Attempts, r.Name)
	}
	assert.Zero(t, without.HedgesSent)
	// The budget (3 tokens a second and 0.1 per success: 23 a second) pays for
	// every hedge (about 13 a second); those skipped are the ones beyond the
	// stage's MaxExtra (1 - 0.95 of the attempts armed).
	assert.Positive(t, with.HedgesSkipped)

	// Without hedging the p99 of served calls is the model's: 400 ms, to the
	// sampling error of 12,000 calls (about 4%).
	assert.InEpsilon(t, float64(hedgingLatency.P99), float64(without.P99), 0.10)

	// Where the delay settles. Hedging censors the slowest samples (an
	// overtaken first copy is recorded with the time it ran, d + L2, not its
	// latency), so the delay is not the model's p95 but the stable point of the
	// map from a delay to the quantile its samples read as: one, just under the
	// p95, whether approached from above or below. The run starts low (the
	// first 20 samples arm the stage at a low estimate) and climbs toward it:
	// a minute in, the median delay lies 6% to 14% under it (seeds 1 to 10),
	// and TestHedgeDelayApproachesItsStablePoint follows it for ten minutes.
	p95 := model.quantile(hedgerule.DefaultQuantile)
	stable := model.settledDelay(p95, hedgerule.DefaultQuantile)
	assert.InEpsilon(t, float64(p95), float64(stable), 0.05)
	assert.InEpsilon(t, float64(stable), float64(model.settledDelay(p95*8/10, hedgerule.DefaultQuantile)), 0.01, "one stable delay")
	d := with.HedgeDelay
	assert.GreaterOrEqual(t, d, stable*8/10, "delay %v, stable at %v", d, stable)
	assert.LessOrEqual(t, d, stable*101/100, "delay %v, stable at %v", d, stable)

	// The share of first copies slower than the delay, the tail beyond it, is
	// at least the model's tail beyond the stable delay (5.3%): more than
	// 1 - 0.95. The stage sends at most MaxExtra (1 - 0.95) of the attempts it
	// arms, with a second's worth saved up, so the extra load is capped there,
	// and all but the few due beyond the cap are sent.
	extra := float64(with.HedgesSent) / calls
	tail := model.survival(d)
	assert.GreaterOrEqual(t, tail, model.survival(stable*101/100))
	assert.LessOrEqual(t, extra, 1-hedgerule.DefaultQuantile+1/calls)
	assert.InDelta(t, min(tail, 1-hedgerule.DefaultQuantile), extra, 0.01, "extra load %.4f, P(L > %v) %.4f", extra, d, tail)

	// A hedged call takes min(L1, d + L2): the hedge wins when d + L2 < L1, and
	// the p99 x of served calls solves P(L1 > x) P(L2 > x - d) = 1%.
	wins := model.hedgeWins(d)
	won := float64(with.HedgesWon) / float64(with.HedgesSent)
	assert.InDelta(t, wins, won, 3*math.Sqrt(wins*(1-wins)/float64(with.HedgesSent)), "hedges won %.3f, expected %.3f", won, wins)
	p99 := solve(func(x time.Duration) float64 { return model.survival(x)*model.survival(x-d) - 0.01 })
	assert.InEpsilon(t, float64(p99), float64(with.P99), 0.10, "p99 %v, expected %v", with.P99, p99)
	assert.Less(t, float64(with.P99), 0.55*float64(without.P99), "hedging halves the p99")
	// The median is untouched: only the slowest calls are hedged.
	assert.InEpsilon(t, float64(without.P50), float64(with.P50), 0.05)
	t.Logf("delay %v (model p95 %v; stable delay %v); extra load %.4f (tail beyond the delay %.4f); hedges won %.3f (expected %.3f); p99 %v -> %v (expected %v)",
		d, p95, stable, extra, tail, won, wins, without.P99, with.P99, p99)
}

// meanSlowFraction averages the per-second slow fraction of r's judge over
// the seconds [from, to).
func meanSlowFraction(r *Report, from, to time.Duration) float64 {
	sum := 0.0
	for _, s := range r.Seconds[from/time.Second : to/time.Second] {
		sum += s.SlowFraction
	}
	return sum / (to - from).Seconds()
}

func TestScenarioSlowCallTrip(t *testing.T) {
	rs := runScenario(t, "slow-call-trip")
	require.Len(t, rs, 3)
	median, chased, fixed := rs[0], rs[1], rs[2]
	l := fitted(slowLatency)
	span, buckets, ratio := breakerconf.DefaultTripWindow, breakerconf.DefaultWindowBuckets, breakerconf.DefaultSlowCallRatio
	bucket := span / time.Duration(buckets)
	require.Zero(t, slowFrom%bucket, "the brownout starts on a bucket boundary, as the model assumes")
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

	// Nothing fails: every call is served unless an open breaker refuses it.
	for _, r := range rs {
		assert.Equal(t, r.Offered, r.Served+r.RefusedByBreaker, r.Name)
		assert.Equal(t, 0.5, r.SlowCallRatio, r.Name)
	}

	// The measured median. After the warm-up the breaker's threshold is 3 x the
	// median, 60 ms (the histogram reads the median within a few percent), and
	// 5.6% of healthy calls exceed it. In the brownout the baseline holds the
	// minute of healthy successes and the browned-out ones since, so its median
	// creeps up (model: 75 ms 15 s in), far below the brownout's own (200 ms):
	// 96% of browned-out calls are slow. No threshold could trip before the
	// window holds SlowCallRatio of slow samples: with every browned-out call
	// slow, about 13 s (SlowCallRatio x TripWindow = 15 s, less the bucket the
	// window has not yet slid over). The model, which counts each sample when it
	// ends and slides the window a bucket at a time, crosses 0.5 at 15 s.
	threshold := l.drifting(slowFactor, slowFrom, breakerconf.DefaultSlowCallsMultiple)
	assert.InEpsilon(t, ms(threshold(0)), ms(median.Seconds[int(slowFrom/time.Second)-1].Threshold), 0.05)
	medianModel := tripModel{l: l, factor: slowFactor, span: span, buckets: buckets, healthy: l.survival(threshold(0)), threshold: threshold}
	fastest := medianModel
	fastest.threshold = func(time.Duration) time.Duration { return 0 }
	earliest, predicted := fastest.trip(ratio), medianModel.trip(ratio)
	require.Positive(t, earliest)
	assert.InDelta(t, ratio*span.Seconds(), predicted.Seconds(), bucket.Seconds(), "the seed's race: about SlowCallRatio x TripWindow")
	require.Equal(t, breaker.CauseSlowCalls, median.FirstOpenCause)
	took := median.FirstOpen - slowFrom
	assert.GreaterOrEqual(t, took, earliest)
	assert.InDelta(t, predicted.Seconds(), took.Seconds(), 1, "opened %v into the brownout, expected %v", took, predicted)
	at := median.Seconds[median.FirstOpen/time.Second].Threshold
	assert.InEpsilon(t, ms(threshold(took)), ms(at), 0.10, "the baseline has crept, not followed")
	assert.Less(t, ms(at), ms(slowLatency.P50)*slowFactor/2)
	// The judge reading the breaker's own threshold trips on the same sample.
	assert.True(t, median.SlowTrip)
	assert.Equal(t, median.FirstOpen, median.SlowTripAt)
	// Probes during the brownout are slow and re-open it, with a doubled break.
	// (After it, a healthy probe is still slow by 3x the median 5.6% of the
	// time, so about one half-open phase in nine re-opens it: seed 1 closes at
	// 161.5 s, seeds 11 and 25 of 1 to 30 stay open to the end.)
	assert.GreaterOrEqual(t, median.BreakerOpens, 2)

	// The chased p99. The threshold is the estimator's p99 of the last 30 s, so
	// about 1% of calls exceed it whatever the dependency does: before the
	// brownout, once the brownout fills the estimator, and after the estimator has
	// forgotten it. Its onset gets a few seconds of calls over a threshold still
	// catching up (the memo of the quantile refreshes every 1/32 of the window's
	// samples, about 0.9 s, then the browned-out share of the window grows): at
	// most one estimator slice, 3 s, against the 30 s trip window, so the
	// fraction peaks below 0.1. It never nears 0.5; the breaker, which has no
	// slow-call trip of its own here, never opens.
	assert.False(t, chased.SlowTrip)
	assert.Zero(t, chased.BreakerOpens)
	assert.Equal(t, chased.Offered, chased.Judged)
	peak := 0.0
	for _, s := range chased.Seconds[slowFrom/time.Second:] {
		peak = max(peak, s.SlowFraction)
	}
	slice := latency.DefaultWindow / 10 // the estimator's default Slices
	assert.Less(t, peak, slice.Seconds()/span.Seconds())
	assert.Greater(t, peak, 0.02, "the onset shows")
	for _, steady := range [][2]time.Duration{{30 * time.Second, slowFrom}, {slowTo - 15*time.Second, slowTo}} {
		f := meanSlowFraction(chased, steady[0], steady[1])
		assert.InDelta(t, 1-slowQuantile, f, 0.005, "mean slow fraction %.4f over [%v, %v)", f, steady[0], steady[1])
	}
	// The threshold follows the brownout up to its p99 (10 x 100 ms), and lingers
	// above 4x the healthy p99 until the estimator has all but forgotten the
	// brownout, 27 s after it. A healthy call that slow is a 1-in-100,000
	// draw, so from the brownout's last stragglers (5 s) to then nothing at all is
	// slow: the chased threshold is blind on the way down too.
	top := chased.Seconds[slowTo/time.Second-1].Threshold
	assert.InEpsilon(t, ms(slowLatency.P99)*slowFactor, ms(top), 0.25)
	after := 0
	for _, s := range chased.Seconds[(slowTo+5*time.Second)/time.Second : (slowTo+25*time.Second)/time.Second] {
		after += s.Slow
		assert.Greater(t, s.Threshold, 4*slowLatency.P99)
	}
	assert.Zero(t, after, "slow calls from 5 s to 25 s after the brownout")

	// The fixed p99: the healthy p99, 100 ms, frozen. 1% of healthy calls and
	// 84% of browned-out ones exceed it, so it trips too, a little later (model:
	// 17.55 s; the crossing is slower than the median's, so noise moves it more:
	// over seeds 1 to 20 it opened within 0.95 s of the model).
	fixedModel := tripModel{l: l, factor: slowFactor, span: span, buckets: buckets, healthy: 1 - slowQuantile,
		threshold: func(time.Duration) time.Duration { return slowLatency.P99 }}
	predictedFixed := fixedModel.trip(ratio)
	require.Equal(t, breaker.CauseSlowCalls, fixed.FirstOpenCause)
	tookFixed := fixed.FirstOpen - slowFrom
	assert.InDelta(t, predictedFixed.Seconds(), tookFixed.Seconds(), 1.5, "opened %v into the brownout, expected %v", tookFixed, predictedFixed)
	assert.Greater(t, tookFixed, took, "the median trips first")
	assert.Equal(t, fixed.FirstOpen, fixed.SlowTripAt)
	t.Logf("median: opened %v into the brownout (model %v, no sooner than %v), threshold %v; fixed p99: %v (model %v); chased p99: peak %.4f after the onset, never tripped",
		took, predicted, earliest, at, tookFixed, predictedFixed, peak)
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
	assert.Equal(t, []string{"retry-storm", "synchronized-probe", "cold-start", "hedging", "slow-call-trip", "ramp-vs-cliff", "probe-lead", "adaptive-limit", "criticality"}, names)
	_, ok := lookup("no-such")
	assert.False(t, ok)
	// The probe scenario's breakers are the defaults but for the jitter.
	s, _ := lookup("synchronized-probe")
	v := s.Variants(3)
	assert.Equal(t, breaker.JitterNone, v[0].Client.Breaker.BreakJitter)
	assert.Equal(t, breaker.JitterEqual, v[1].Client.Breaker.BreakJitter)
}

// Run for ten minutes, the hedging scenario's delay climbs to within 6% of its
// one stable point, and its extra load stays at the stage's MaxExtra: the
// drift a minute in is the approach, not where the stage settles.
func TestHedgeDelayApproachesItsStablePoint(t *testing.T) {
	model := fitted(hedgingLatency)
	stable := model.settledDelay(model.quantile(hedgerule.DefaultQuantile), hedgerule.DefaultQuantile)
	c := hedging(1)[1]
	c.Duration = 10 * time.Minute
	r, err := Run(c)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, r.HedgeDelay, stable*94/100, "delay %v, stable at %v", r.HedgeDelay, stable)
	assert.LessOrEqual(t, r.HedgeDelay, stable)
	extra := float64(r.HedgesSent) / float64(r.Offered)
	assert.LessOrEqual(t, extra, 1-hedgerule.DefaultQuantile, "at most MaxExtra")
	assert.Greater(t, extra, 0.045, "and nearly all of it")
}

// TestAnyScenarioRunsUnderBursts: Under changes how every variant's calls
// arrive, and nothing else.
func TestAnyScenarioRunsUnderBursts(t *testing.T) {
	s, ok := lookup("retry-storm")
	require.True(t, ok)
	even, bursty := s.Variants(1), s.Under(Poisson).Variants(1)
	require.Len(t, bursty, len(even))
	for i := range even {
		assert.Equal(t, Poisson, bursty[i].Arrivals)
		bursty[i].Arrivals = Even
		assert.Equal(t, even[i], bursty[i])
	}
	rs, err := s.Under(Poisson).Run(1)
	require.NoError(t, err)
	assert.Equal(t, Poisson, rs[0].Arrivals)
	assert.Nil(t, Scenario{Name: "pending"}.Under(Poisson).Variants)
}

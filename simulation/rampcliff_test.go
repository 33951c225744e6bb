package simulation

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/policy/breaker"
)

// withTransitions runs c and returns its report and every breaker transition,
// in order.
func withTransitions(t *testing.T, c Config) (*Report, []breaker.Transition) {
	t.Helper()
	s, err := newSim(c)
	require.NoError(t, err)
	var trs []breaker.Transition
	s.rec.onEvent = func(e pipeline.Event) {
		if tr, ok := e.(breaker.Transition); ok {
			trs = append(trs, tr)
		}
	}
	s.schedule()
	s.run()
	s.rec.until(max(s.now, c.Duration))
	return s.rec.report(), trs
}

// at returns when tr happened, on the run's time.
func at(tr breaker.Transition) time.Duration { return tr.At.Sub(epoch) }

// failedIn sums the calls offered over the whole seconds in [from, to) that
// failed.
func failedIn(r *Report, from, to time.Duration) int {
	n := 0
	for _, s := range r.Seconds[from/time.Second : to/time.Second] {
		n += s.Failed
	}
	return n
}

// The break the default breaker serves after a trip with no growth: 15 s,
// with equal jitter.
const firstBreakMin, firstBreakMax = breaker.DefaultBreakDuration / 2, breaker.DefaultBreakDuration

func TestScenarioRampVsCliff(t *testing.T) {
	s, ok := Lookup("ramp-vs-cliff")
	require.True(t, ok)
	variants := s.Variants(DefaultSeed)
	require.Len(t, variants, 2)
	cliff, cliffTrs := withTransitions(t, variants[0])
	ramp, rampTrs := withTransitions(t, variants[1])
	t.Log("\n" + cliff.String() + "\n" + ramp.String() + "\n" + s.Summary([]*Report{cliff, ramp}))
	require.Nil(t, variants[0].Client.Breaker.Recovery)
	require.Equal(t, breaker.Recovery{}, *variants[1].Client.Breaker.Recovery)

	// What is counted: the calls offered in the 45 s after the outage, exactly;
	// the window is whole seconds, so the per-second series says the same.
	from, to := rampTo, rampTo+rampWindow
	require.Equal(t, rampRate*int(rampWindow/time.Second), offeredIn(cliff, from, to))
	require.Equal(t, to, cliff.Duration, "calls are offered until the window ends")
	for _, r := range []*Report{cliff, ramp} {
		perSecond := 0
		for _, sec := range r.Seconds[from/time.Second : to/time.Second] {
			perSecond += sec.Served
		}
		assert.Equal(t, perSecond, servedAfterOutage(r), r.Name)
	}
	servedCliff, servedRamp := servedAfterOutage(cliff), servedAfterOutage(ramp)
	assert.Greater(t, servedRamp, 3*servedCliff, "the claim is 2x; the test asks for 3x")

	// The outage opens both breakers at once: 5 fast failures in a row.
	for _, r := range []*Report{cliff, ramp} {
		assert.Equal(t, breaker.CauseConsecutiveFailures, r.FirstOpenCause, r.Name)
		assert.InDelta(t, rampFrom.Seconds(), r.FirstOpen.Seconds(), 0.25, r.Name)
	}

	// The cliff: each close hands the full load to a dependency that the break
	// left cold, which sheds a third of it; the breaker re-opens within about
	// a second, on failures, with a break that has not grown (closing reset
	// the growth), which leaves it cold again.
	closes := 0
	for i, tr := range cliffTrs {
		if tr.From != breaker.HalfOpen || tr.To != breaker.Closed {
			continue
		}
		closes++
		if i+1 == len(cliffTrs) {
			assert.Greater(t, at(tr), to-2*time.Second, "only the last close may outlive the run")
			continue
		}
		next := cliffTrs[i+1]
		require.Equal(t, breaker.Open, next.To, "after the close at %v", at(tr))
		assert.Less(t, at(next)-at(tr), 2*time.Second, "re-opened within 2 s of closing at %v", at(tr))
		assert.Contains(t, []breaker.Cause{breaker.CauseRelativeFailureRatio, breaker.CauseConsecutiveFailures}, next.Cause)
		assert.GreaterOrEqual(t, next.Break, firstBreakMin)
		assert.LessOrEqual(t, next.Break, firstBreakMax, "a first break again")
	}
	assert.GreaterOrEqual(t, closes, 3, "the cliff cycles")
	assert.Positive(t, failedIn(cliff, from, to), "the full load overloads the cold dependency")
	assert.Less(t, servedCliff, offeredIn(cliff, from, to)/10)

	// The ramp: one open (the outage), one ramp, which closes the breaker and
	// never overloads the dependency (one failure would have re-opened it);
	// it lasts longer than its clock term alone would (a quarter of the
	// break), because slow calls halve it; after it, every call is served.
	assert.Equal(t, 1, ramp.BreakerOpens)
	assert.Equal(t, []int{1, 1, 0}, []int{ramp.Ramps, ramp.RampsDone, ramp.RampsFailed})
	assert.Zero(t, failedIn(ramp, from, to))
	var opened, started, done breaker.Transition
	for _, tr := range rampTrs {
		switch {
		case tr.To == breaker.Open:
			opened = tr
		case tr.To == breaker.Recovering:
			started = tr
		case tr.From == breaker.Recovering:
			done = tr
		}
	}
	require.Equal(t, breaker.CauseRampDone, done.Cause)
	clockLength := time.Duration(breaker.DefaultRecoveryFraction * float64(opened.Break))
	assert.Greater(t, at(done)-at(started), clockLength, "the evidence term held the ramp back")
	end := (at(done) + 2*time.Second).Truncate(time.Second)
	for i := int(end / time.Second); i < int(to/time.Second); i++ {
		assert.Equal(t, ramp.Seconds[i].Offered, ramp.Seconds[i].Served, "second %d, after the ramp", i)
	}
	assert.True(t, ramp.Stable)

	// Deficit accounting: over the seconds spent wholly in the ramp, the
	// breaker admitted the sum of the fractions it was admitting at, within
	// the one credit it may carry.
	ramped := 0
	for i, sec := range ramp.Seconds {
		if sec.Ramping == 0 {
			continue
		}
		assert.LessOrEqual(t, sec.RampFraction, min(sec.RampClock, sec.RampEvidence)+1e-12, "second %d", i)
		if sec.Ramping != sec.Offered {
			continue // the ramp started or ended in it
		}
		ramped++
		admitted := sec.Offered - sec.RefusedByBreaker
		assert.InDelta(t, float64(sec.Ramping)*sec.RampFraction, float64(admitted), 1, "second %d", i)
	}
	assert.Greater(t, ramped, 3)

	// The same seed gives the same reports and summary.
	again, err := s.Run(DefaultSeed)
	require.NoError(t, err)
	assert.Equal(t, []*Report{cliff, ramp}, again)
	assert.Equal(t, s.Summary([]*Report{cliff, ramp}), s.Summary(again))
}

// TestScenarioRampVsCliffOverSeeds checks the claim, with a margin, over the
// seeds 1 to 30: the ramp serves more than 3 times what the cliff serves, and
// never re-opens.
func TestScenarioRampVsCliffOverSeeds(t *testing.T) {
	s, _ := Lookup("ramp-vs-cliff")
	var ratios []float64
	for seed := uint64(1); seed <= 30; seed++ {
		rs, err := s.Run(seed)
		require.NoError(t, err)
		cliff, ramp := servedAfterOutage(rs[0]), servedAfterOutage(rs[1])
		assert.Greater(t, ramp, 3*cliff, "seed %d", seed)
		assert.Zero(t, rs[1].RampsFailed, "seed %d", seed)
		ratios = append(ratios, float64(ramp)/float64(cliff))
	}
	slices.Sort(ratios)
	t.Logf("ramp / cliff over seeds 1 to 30: min %.2f, median %.2f, max %.2f", ratios[0], ratios[len(ratios)/2], ratios[len(ratios)-1])
}

// TestRampCostsWhenTheDependencyNeedNotWarm runs the scenario with half its
// load, under the cold capacity: the cliff's close does not overload the cold
// dependency, so there is no cliff to fall off, and the ramp only refuses
// calls the dependency could have served.
func TestRampCostsWhenTheDependencyNeedNotWarm(t *testing.T) {
	s, _ := Lookup("ramp-vs-cliff")
	for seed := uint64(1); seed <= 10; seed++ {
		var served [2]int
		for k, c := range s.Variants(seed) {
			c.Rate = rampRate / 2
			r, err := Run(c)
			require.NoError(t, err)
			served[k] = servedAfterOutage(r)
			if k == 0 {
				assert.Equal(t, 1, r.BreakerOpens, "seed %d: the cliff never re-opens", seed)
			}
		}
		assert.Less(t, served[1], served[0], "seed %d: the ramp serves less", seed)
	}
}

package simulation

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/internal/breakerconf"
	"github.com/resilience-go/pipeline/internal/discrete"
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
	s.rec.until(max(s.Now, c.Duration))
	return s.rec.report(), trs
}

// at returns when tr happened, on the run's time.
func at(tr breaker.Transition) time.Duration { return tr.At.Sub(discrete.Epoch) }

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
const firstBreakMin, firstBreakMax = breakerconf.DefaultBreakDuration / 2, breakerconf.DefaultBreakDuration

func TestScenarioRampVsCliff(t *testing.T) {
	s, ok := lookup("ramp-vs-cliff")
	require.True(t, ok)
	variants := s.Variants(DefaultSeed)
	require.Len(t, variants, 3)
	cliff, cliffTrs := withTransitions(t, variants[0])
	alone, aloneTrs := withTransitions(t, variants[1])
	ramp, rampTrs := withTransitions(t, variants[2])
	t.Log("\n" + cliff.String() + "\n" + alone.String() + "\n" + ramp.String() + "\n" + s.Summary([]*Report{cliff, alone, ramp}))
	require.Nil(t, variants[0].Client.Breaker.Recovery)
	require.Equal(t, breaker.Recovery{TrickleEvery: -1}, *variants[1].Client.Breaker.Recovery)
	require.Equal(t, breaker.Recovery{}, *variants[2].Client.Breaker.Recovery)

	// What is counted: the calls offered in the 45 s after the outage, exactly;
	// the window is whole seconds, so the per-second series says the same.
	from, to := rampTo, rampTo+rampWindow
	require.Equal(t, rampRate*int(rampWindow/time.Second), offeredIn(cliff, from, to))
	require.Equal(t, to, cliff.Duration, "calls are offered until the window ends")
	for _, r := range []*Report{cliff, alone, ramp} {
		perSecond := 0
		for _, sec := range r.Seconds[from/time.Second : to/time.Second] {
			perSecond += sec.Served
		}
		assert.Equal(t, perSecond, servedAfterOutage(r), r.Name)
	}
	servedCliff, servedAlone, servedRamp := servedAfterOutage(cliff), servedAfterOutage(alone), servedAfterOutage(ramp)
	assert.Greater(t, servedAlone, 3*servedCliff, "the claim is 2x; the test asks for 3x")
	assert.Greater(t, servedRamp, servedAlone, "the trickle serves more still")

	// The outage opens every breaker at once: 5 fast failures in a row.
	for _, r := range []*Report{cliff, alone, ramp} {
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

	// Each ramp: one open (the outage), one ramp, which closes the breaker
	// and never overloads the dependency; it lasts at least its length (a
	// quarter of the time the breaker was open, at least a second), longer
	// when slow calls hold it; after it, every call is served. The trickle
	// ends the break within about a second of the outage's end, where the
	// ramp alone waits out its 7.5 to 15 s break.
	for _, run := range []struct {
		r   *Report
		trs []breaker.Transition
	}{{alone, aloneTrs}, {ramp, rampTrs}} {
		r := run.r
		assert.Equal(t, 1, r.BreakerOpens, r.Name)
		assert.Equal(t, []int{1, 1, 0}, []int{r.Ramps, r.RampsDone, r.RampsFailed}, r.Name)
		assert.Zero(t, failedIn(r, from, to), r.Name)
		var opened, started, done breaker.Transition
		for _, tr := range run.trs {
			switch {
			case tr.To == breaker.Open:
				opened = tr
			case tr.To == breaker.Recovering:
				started = tr
			case tr.From == breaker.Recovering:
				done = tr
			}
		}
		require.Equal(t, breaker.CauseRampDone, done.Cause, r.Name)
		length := max(time.Duration(breakerconf.DefaultRecoveryFraction*float64(at(started)-at(opened))), breakerconf.DefaultRecoveryMinimum)
		assert.GreaterOrEqual(t, at(done)-at(started), length, r.Name)
		end := (at(done) + 2*time.Second).Truncate(time.Second)
		for i := int(end / time.Second); i < int(to/time.Second); i++ {
			assert.Equal(t, r.Seconds[i].Offered, r.Seconds[i].Served, "%s: second %d, after the ramp", r.Name, i)
		}
		assert.True(t, r.Stable, r.Name)
		if r == ramp {
			assert.Less(t, at(started), rampTo+2*time.Second, "the trickle found the dependency back")
		} else {
			assert.GreaterOrEqual(t, at(started)-at(opened), firstBreakMin, "the ramp alone waits out its break")
		}
	}

	// Deficit accounting: over the seconds spent wholly in the ramp, the
	// breaker admitted the sum of the fractions it was admitting at, within
	// the one credit it may carry.
	ramped := 0
	for i, sec := range alone.Seconds {
		if sec.Ramping == 0 {
			continue
		}
		assert.True(t, sec.RampHeld >= 0 && sec.RampHeld <= 1, "second %d", i)
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
	assert.Equal(t, []*Report{cliff, alone, ramp}, again)
	assert.Equal(t, s.Summary([]*Report{cliff, alone, ramp}), s.Summary(again))
}

// TestScenarioRampVsCliffOverSeeds checks the claim, with a margin, over the
// seeds 1 to 30: either ramp serves more than 3 times what the cliff serves,
// and never re-opens; the trickle serves more than the ramp alone.
func TestScenarioRampVsCliffOverSeeds(t *testing.T) {
	s, _ := lookup("ramp-vs-cliff")
	var ratios []float64
	for seed := uint64(1); seed <= 30; seed++ {
		rs, err := s.Run(seed)
		require.NoError(t, err)
		cliff, alone, ramp := servedAfterOutage(rs[0]), servedAfterOutage(rs[1]), servedAfterOutage(rs[2])
		assert.Greater(t, alone, 3*cliff, "seed %d", seed)
		assert.Greater(t, ramp, alone, "seed %d", seed)
		assert.Zero(t, rs[1].RampsFailed+rs[2].RampsFailed, "seed %d", seed)
		ratios = append(ratios, float64(alone)/float64(cliff))
	}
	slices.Sort(ratios)
	t.Logf("ramp alone / cliff over seeds 1 to 30: min %.2f, median %.2f, max %.2f", ratios[0], ratios[len(ratios)/2], ratios[len(ratios)-1])
}

// TestRampCostsWhenTheDependencyNeedNotWarm runs the scenario with half its
// load, under the cold capacity: the cliff's close does not overload the cold
// dependency, so there is no cliff to fall off, and the ramp alone only
// refuses calls the dependency could have served. The trickle pays for that:
// it ends the break within a second of the outage's end, so the ramp with it
// serves more than the cliff even here.
func TestRampCostsWhenTheDependencyNeedNotWarm(t *testing.T) {
	s, _ := lookup("ramp-vs-cliff")
	for seed := uint64(1); seed <= 10; seed++ {
		var served [3]int
		for k, c := range s.Variants(seed) {
			c.Rate = rampRate / 2
			r, err := Run(c)
			require.NoError(t, err)
			served[k] = servedAfterOutage(r)
			if k == 0 {
				assert.Equal(t, 1, r.BreakerOpens, "seed %d: the cliff never re-opens", seed)
			}
		}
		assert.Less(t, served[1], served[0], "seed %d: the ramp alone serves less", seed)
		assert.Greater(t, served[2], served[0], "seed %d: the ramp with the trickle serves more", seed)
	}
}

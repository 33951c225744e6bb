package simulation

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline/policy/breaker"
)

func TestRecorderCountsByHowCallsEnded(t *testing.T) {
	const s = time.Second
	rec := newRecorder(Config{Name: "n", Seed: 9, Duration: 3 * s, Rate: 2}, []Interval{{From: s, To: 2 * s}})
	// Second 0: two calls, one served in one attempt, one refused by the breaker.
	rec.offer(0)
	rec.attempt(0, false)
	rec.served(0, 30*time.Millisecond, 0)
	rec.offer(500 * time.Millisecond)
	rec.refused(500*time.Millisecond, byBreaker, 0)
	// Second 1 (the fault): two calls, three attempts each, one probe; one
	// failed, one refused by the budget. A retry lands in second 2.
	rec.offer(s)
	rec.offer(1500 * time.Millisecond)
	for _, at := range []time.Duration{s, 1100 * time.Millisecond, 1200 * time.Millisecond, 1500 * time.Millisecond, 1600 * time.Millisecond} {
		rec.attempt(at, at == 1600*time.Millisecond)
	}
	rec.attempt(2100*time.Millisecond, false)
	rec.failed(s, false, 0)
	rec.refused(1500*time.Millisecond, byBudget, 0)
	// Second 2: one call, served late.
	rec.offer(2 * s)
	rec.attempt(2*s, false)
	rec.served(2*s, 90*time.Millisecond, 0)
	rec.onBreakerEvent(breaker.Transition{From: breaker.Closed, To: breaker.Open})
	rec.onBreakerEvent(breaker.Transition{From: breaker.Open, To: breaker.HalfOpen})
	rec.onBreakerEvent(breaker.Rejection{})

	r := rec.report()
	assert.Equal(t, "n", r.Name)
	assert.Equal(t, uint64(9), r.Seed)
	assert.Equal(t, 1, r.Processes)
	assert.Equal(t, 5, r.Offered)
	assert.Equal(t, 2, r.Served)
	assert.Equal(t, 1, r.RefusedByBreaker)
	assert.Equal(t, 1, r.RefusedByBudget)
	assert.Equal(t, 2, r.RefusedByBreaker+r.RefusedByBudget+r.RefusedByLimit)
	assert.Equal(t, 1, r.Failed)
	assert.Equal(t, r.Offered, r.Served+r.RefusedByBreaker+r.RefusedByBudget+r.RefusedByLimit+r.Failed)
	assert.InDelta(t, 0.4, r.Availability, 1e-12)
	assert.Equal(t, 8, r.Attempts)
	assert.InDelta(t, 8.0/5, r.Amplification, 1e-12)
	assert.Equal(t, 1, r.WorstSecond)
	assert.InDelta(t, 2.5, r.WorstAmplification, 1e-12)
	assert.InDelta(t, 2.5, r.FaultAmplification, 1e-12, "5 attempts during the fault for 2 calls offered in it")
	assert.Equal(t, 30*time.Millisecond, r.P50)
	assert.Equal(t, 90*time.Millisecond, r.P90)
	assert.Equal(t, 90*time.Millisecond, r.P99)
	assert.Equal(t, 1, r.BreakerOpens)
	assert.Equal(t, 1, r.Probes)
	assert.Equal(t, 1, r.PeakProbes)
	assert.Equal(t, 1600*time.Millisecond, r.PeakProbesAt)
	assert.Len(t, r.ProbeSeries, 17)
	assert.Equal(t, []Second{
		{Offered: 2, Attempts: 1, Served: 1, RefusedByBreaker: 1},
		{Offered: 2, Attempts: 5, RefusedByBudget: 1, Failed: 1, Probes: 1},
		{Offered: 1, Attempts: 2, Served: 1},
	}, r.Seconds)
	assert.True(t, r.Recovered)
	assert.Zero(t, r.TimeToRecover, "second 2 starts when the fault ends and is fully served")
	assert.True(t, r.Stable)
}

func TestRank(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	sorted := []time.Duration{ms(1), ms(2), ms(3), ms(4), ms(5), ms(6), ms(7), ms(8), ms(9), ms(10)}
	assert.Equal(t, ms(5), rank(sorted, 0.5))
	assert.Equal(t, ms(9), rank(sorted, 0.9))
	assert.Equal(t, ms(10), rank(sorted, 0.99))
	assert.Equal(t, ms(1), rank(sorted, 0))
	assert.Zero(t, rank(nil, 0.5))
}

func TestRecorderCountsHedges(t *testing.T) {
	rec := newRecorder(Config{Duration: 2 * time.Second, Rate: 1, Client: Client{Hedge: &Hedge{}}}, nil)
	for i, d := range []time.Duration{30, 10, 20} {
		at := time.Duration(i) * 700 * time.Millisecond
		rec.offer(at)
		rec.attempt(at, false)
		rec.attempt(at+d*time.Millisecond, false)
		rec.hedgeSent(at+d*time.Millisecond, d*time.Millisecond)
		rec.served(at, (d+5)*time.Millisecond, 0)
	}
	rec.hedgeWon()
	rec.hedgeSkipped()
	r := rec.report()
	assert.True(t, r.Hedging)
	assert.Equal(t, 3, r.HedgesSent)
	assert.Equal(t, 1, r.HedgesWon)
	assert.Equal(t, 1, r.HedgesSkipped)
	assert.Equal(t, 20*time.Millisecond, r.HedgeDelay, "the median delay")
	assert.Equal(t, 6, r.Attempts)
	assert.Equal(t, []int{2, 1}, []int{r.Seconds[0].Hedges, r.Seconds[1].Hedges})
	// Latency is the nearest-rank quantile of served calls, q clamped to [0, 1].
	assert.Equal(t, 15*time.Millisecond, r.Latency(0))
	assert.Equal(t, 15*time.Millisecond, r.Latency(-1))
	assert.Equal(t, 25*time.Millisecond, r.Latency(0.5))
	assert.Equal(t, 35*time.Millisecond, r.Latency(2))
	assert.Equal(t, r.P99, r.Latency(0.99))
	assert.Zero(t, (&Report{}).Latency(0.5), "no call served")

	none := newRecorder(Config{Duration: time.Second, Rate: 1}, nil).report()
	assert.False(t, none.Hedging)
	assert.Zero(t, none.HedgeDelay)
}

func TestServedInCountsByTheInstantOffered(t *testing.T) {
	// 10 calls a second, evenly spaced from a phase under 100 ms; the calls
	// offered during the outage, [1 s, 2 s), fail.
	r, err := Run(Config{Duration: 4 * time.Second, Rate: 10, Dependency: Outage{From: time.Second, To: 2 * time.Second}})
	require.NoError(t, err)
	require.Equal(t, 30, r.Served)
	assert.Equal(t, r.Served, r.ServedIn(0, r.Duration))
	assert.Equal(t, 0, r.ServedIn(time.Second, 2*time.Second), "the outage")
	assert.Equal(t, 5, r.ServedIn(500*time.Millisecond, 1500*time.Millisecond), "half a second each side of the outage's start")
	assert.Equal(t, 10, r.ServedIn(2*time.Second, 3*time.Second))
	for i, s := range r.Seconds {
		from := time.Duration(i) * time.Second
		assert.Equal(t, s.Served, r.ServedIn(from, from+time.Second), "second %d", i)
	}
	assert.Equal(t, 0, r.ServedIn(3*time.Second, time.Second), "an empty interval")
	assert.Equal(t, 0, r.ServedIn(5*time.Second, 6*time.Second), "after the run")
}

func TestRecorderCountsRamps(t *testing.T) {
	c := Config{Duration: 3 * time.Second, Rate: 1, Client: Client{Breaker: &breaker.Config{Recovery: &breaker.Recovery{}}}}
	rec := newRecorder(c, nil)
	assert.True(t, rec.r.Ramping)
	for _, tr := range []breaker.Transition{
		{From: breaker.Closed, To: breaker.Open, Cause: breaker.CauseConsecutiveFailures},
		{From: breaker.Open, To: breaker.HalfOpen},
		{From: breaker.HalfOpen, To: breaker.Recovering},
		{From: breaker.Recovering, To: breaker.Open, Cause: breaker.CauseRampFailed},
		{From: breaker.Open, To: breaker.HalfOpen},
		{From: breaker.HalfOpen, To: breaker.Recovering},
		{From: breaker.Recovering, To: breaker.Closed, Cause: breaker.CauseRampDone},
		{From: breaker.Closed, To: breaker.Open, Cause: breaker.CauseConsecutiveFailures},
		{From: breaker.Open, To: breaker.HalfOpen},
		{From: breaker.HalfOpen, To: breaker.Recovering},
	} {
		rec.onBreakerEvent(tr)
	}
	r := rec.report()
	assert.Equal(t, 3, r.BreakerOpens)
	assert.Equal(t, 3, r.Ramps)
	assert.Equal(t, 1, r.RampsDone)
	assert.Equal(t, 1, r.RampsFailed, "the third is still running")

	// Per second: the means of what the ramps offered an attempt admitted.
	rec = newRecorder(c, nil)
	rec.ramps = []rampSum{{}, {n: 2, fraction: 0.3, held: 1}}
	rec.second(2500 * time.Millisecond).Offered = 1
	r = rec.report()
	require.Len(t, r.Seconds, 3)
	assert.Zero(t, r.Seconds[0].Ramping)
	assert.Equal(t, 2, r.Seconds[1].Ramping)
	assert.InDelta(t, 0.15, r.Seconds[1].RampFraction, 1e-12)
	assert.InDelta(t, 0.5, r.Seconds[1].RampHeld, 1e-12)
	assert.Zero(t, r.Seconds[2].Ramping)

	assert.False(t, newRecorder(Config{Client: Client{Breaker: &breaker.Config{}}}, nil).r.Ramping, "no Recovery, no ramp")
}

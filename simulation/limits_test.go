package simulation

import (
	"bytes"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline/criticality"
	"github.com/resilience-go/pipeline/latency"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/adaptive"
	"github.com/resilience-go/pipeline/policy/breaker"
	"github.com/resilience-go/pipeline/policy/bulkhead"
)

func TestWorkersQueueFirstComeFirstServed(t *testing.T) {
	d := start(t, Workers{Count: 2, Base: Healthy{P50: 10 * time.Millisecond, P99: 10 * time.Millisecond}})
	r := newRand()
	ms := time.Millisecond
	var got []time.Duration
	for _, at := range []time.Duration{0, 0, 0, 5 * ms, 30 * ms} {
		resp := ask(d, r, at, 0)
		require.Equal(t, outcome.OK, resp.Verdict.Kind)
		got = append(got, resp.Latency)
	}
	// Two workers: the third attempt waits for the first to finish (10 ms),
	// the fourth, arriving at 5 ms, for the second (free at 10 ms, then 10
	// more), the fifth finds one free.
	assert.Equal(t, []time.Duration{10 * ms, 10 * ms, 20 * ms, 15 * ms, 10 * ms}, got)
	_, err := Workers{}.Start()
	assert.ErrorContains(t, err, "Workers.Count")
	assert.Equal(t, []Interval{{From: 1, To: 2, Name: "brownout (5x)"}}, Workers{Count: 1, Base: Brownout{From: 1, To: 2}}.Faults())
}

func TestALimitIsValidated(t *testing.T) {
	c := Config{Duration: time.Second, Rate: 1, Dependency: Healthy{}, Client: Client{Limit: &Limit{
		Critical: 2, Bulkhead: &bulkhead.Config{MaxConcurrent: 1, MaxQueue: 1}, Adaptive: &adaptive.Config{MaxQueue: 1, Estimator: &latency.Estimator{}},
	}}}
	err := c.Validate()
	for _, field := range []string{"Limit.Critical", "both set", "Limit.Bulkhead.MaxQueue", "Limit.Adaptive.MaxQueue", "Limit.Adaptive.Estimator"} {
		assert.ErrorContains(t, err, field)
	}
	c.Client.Limit = &Limit{Bulkhead: &bulkhead.Config{}}
	_, err = Run(c)
	assert.ErrorContains(t, err, "Client.Limit.Bulkhead: bulkhead: Config.MaxConcurrent", "a limiter's own settings are checked, naming the field")
}

// A run with a limit counts every call once, by how it ended, at each
// level, and its report renders the same bytes each time.
func TestALimitedRunIsCountedAndDeterministic(t *testing.T) {
	s, ok := lookup("adaptive-limit")
	require.True(t, ok)
	render := func() string {
		rs, err := s.Run(7)
		require.NoError(t, err)
		var b bytes.Buffer
		for _, r := range rs {
			b.WriteString(r.String())
			require.NoError(t, r.WriteSeries(&b))
			require.NoError(t, r.Chart().WriteSVG(&b))
			assert.Equal(t, r.Offered, r.Served+r.RefusedByBreaker+r.RefusedByBudget+r.RefusedByLimit+r.Failed, r.Name)
			assert.Equal(t, r.Offered, r.Levels[0].Offered, "unmarked: every call at level 0")
			assert.Equal(t, r.Served, r.Levels[0].Served)
			assert.Equal(t, r.RefusedByLimit, r.Levels[0].Refused)
			assert.Equal(t, r.TimedOut, r.Levels[0].TimedOut)
			assert.LessOrEqual(t, r.TimedOut, r.Failed)
		}
		for _, c := range s.Compare(rs) {
			require.NoError(t, c.WriteSVG(&b))
		}
		b.WriteString(s.Summary(rs))
		return b.String()
	}
	assert.Equal(t, render(), render())
}

// TestScenarioAdaptiveLimit checks the adaptive-limit scenario's claim with
// figures derived from its model.
func TestScenarioAdaptiveLimit(t *testing.T) {
	s, ok := lookup("adaptive-limit")
	require.True(t, ok)
	rs, err := s.Run(DefaultSeed)
	require.NoError(t, err)
	for _, r := range rs {
		t.Log("\n" + r.String())
	}
	t.Log("\n" + s.Summary(rs))
	require.Len(t, rs, 3)
	small, large, adapt := rs[0], rs[1], rs[2]
	brownout := (limitTo - limitFrom).Seconds()
	offered := limitRate * int(brownout)
	require.Equal(t, offered, offeredSeconds(small, limitFrom, limitTo))

	// The model: log-normal service times with sigma = ln(p99/p50) / z99, so
	// a mean of p50 * exp(sigma^2 / 2); browned out five times, on 30
	// workers, a capacity of 30 / mean calls a second: about 287, under the
	// 400 offered. Healthy, the load keeps 400 * mean, about 8, busy.
	sigma := math.Log(float64(limitLatency.P99)/float64(limitLatency.P50)) / z99
	healthyMean := limitLatency.P50.Seconds() * math.Exp(sigma*sigma/2)
	mean := defaultBrownoutFactor * healthyMean
	capacity := limitWorkers / mean
	require.InDelta(t, 287, capacity, 1)

	// Before the brownout every variant serves everything.
	for _, r := range rs {
		assert.Equal(t, limitRate*30, r.ServedIn(0, limitFrom), r.Name)
	}

	// The small bulkhead never queues inside the dependency (16 < 30
	// workers), so in the brownout it serves 16 calls per mean service time.
	assert.InEpsilon(t, limitSmall/mean*brownout, small.ServedIn(limitFrom, limitTo), 0.03)

	// The large one lets 400 a second in, all of which reach the dependency:
	// its queue grows by 400 - capacity a second, every call waits past the
	// timeout after the first second or so, and almost nothing is served.
	assert.Less(t, large.ServedIn(limitFrom, limitTo), offered/50)
	// After the brownout the dependency still holds the backlog, browned-out
	// calls nobody waits for, and works it off with the workers the healthy
	// load leaves free: until then every call times out.
	backlog := (limitRate - capacity) * brownout * mean // worker-seconds of abandoned work
	drain := backlog / (limitWorkers - limitRate*healthyMean)
	assert.InEpsilon(t, (60-drain)*limitRate, large.ServedIn(limitTo, limitTo+60*time.Second), 0.1)

	// The adaptive limit serves close to the capacity: at least 85% of it,
	// and more than 1.5 times the small bulkhead; hardly a call times out;
	// the dependency never holds more than twice its workers.
	served := adapt.ServedIn(limitFrom, limitTo)
	assert.GreaterOrEqual(t, float64(served), 0.85*capacity*brownout)
	assert.Greater(t, float64(served), 1.5*float64(small.ServedIn(limitFrom, limitTo)))
	timedOut, held, limits := 0, 0, 0.0
	for _, sec := range adapt.Seconds[limitFrom/time.Second : limitTo/time.Second] {
		timedOut += sec.TimedOut
		held = max(held, sec.Held)
	}
	assert.Less(t, timedOut, offered/100)
	assert.LessOrEqual(t, held, 2*limitWorkers)
	// Once it has found the capacity (the second half of the brownout), its
	// limit hovers about the number of workers.
	half := adapt.Seconds[(limitFrom+limitTo)/2/time.Second : limitTo/time.Second]
	for _, sec := range half {
		limits += float64(sec.Limit)
	}
	mid := limits / float64(len(half))
	assert.GreaterOrEqual(t, mid, 0.8*limitWorkers)
	assert.LessOrEqual(t, mid, 1.6*limitWorkers)
	// And afterwards it lets the whole load through again at once.
	assert.GreaterOrEqual(t, adapt.ServedIn(limitTo, limitDuration), int(0.995*float64(offeredSeconds(adapt, limitTo, limitDuration))))
	t.Logf("capacity %.1f/s; served in the brownout: small %d, large %d, adaptive %d; adaptive limit %.1f on average in its second half; large drains in %.1f s",
		capacity, small.ServedIn(limitFrom, limitTo), large.ServedIn(limitFrom, limitTo), served, mid, drain)
}

// A limit goes with the rest of the card: over several processes, with
// retries and a breaker through an outage, every call is counted once, by
// how it ended, and at its level.
func TestALimitGoesWithTheCard(t *testing.T) {
	r, err := Run(Config{
		Seed: 3, Duration: 20 * time.Second, Processes: 3, Rate: 50,
		Dependency: Outage{From: 5 * time.Second, To: 10 * time.Second, Base: Healthy{}},
		Client: Client{
			Retry: &Retry{}, Breaker: &breaker.Config{}, AttemptTimeout: 100 * time.Millisecond,
			Limit: &Limit{Adaptive: &adaptive.Config{}, Critical: 0.3},
		},
	})
	require.NoError(t, err)
	assert.Equal(t, r.Offered, r.Served+r.RefusedByBreaker+r.RefusedByBudget+r.RefusedByLimit+r.Failed)
	crit, shed := r.Levels[criticality.Critical], r.Levels[criticality.Sheddable]
	assert.Zero(t, r.Levels[0].Offered, "every call has a level")
	assert.Equal(t, r.Offered, crit.Offered+shed.Offered)
	assert.Equal(t, r.Served, crit.Served+shed.Served)
	assert.Equal(t, r.RefusedByBreaker+r.RefusedByBudget+r.RefusedByLimit, crit.Refused+shed.Refused)
	assert.Equal(t, r.Failed, crit.Failed+shed.Failed)
	assert.InDelta(t, 0.3, ratio(crit.Offered, r.Offered), 0.03)
	assert.Positive(t, r.BreakerOpens, "the outage opened breakers")
	for i, s := range r.Seconds {
		assert.Positive(t, s.Limit, "second %d: three adaptive limits", i)
	}
	assert.Contains(t, r.String(), "  limit         adaptive limit; 0.3 of the calls critical\n")
}

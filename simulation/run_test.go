package simulation

import (
	"bytes"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline/budget"
	"github.com/resilience-go/pipeline/policy/breaker"
	"github.com/resilience-go/pipeline/policy/retry"
)

// busy is a run that exercises everything at once: a fleet with breakers,
// budgets, retries and hedges, a latency distribution, an outage and failures.
func busy(seed uint64) Config {
	return Config{
		Name:      "busy",
		Seed:      seed,
		Duration:  30 * time.Second,
		Processes: 20,
		Rate:      10,
		Dependency: Outage{From: 10 * time.Second, To: 14 * time.Second,
			Base: FailingFraction{Fraction: 0.2, From: 20 * time.Second, To: 25 * time.Second, Base: Healthy{}}},
		Client: Client{
			Breaker:        &breaker.Config{},
			Budget:         &budget.Config{},
			Retry:          &Retry{},
			Hedge:          &Hedge{},
			AttemptTimeout: 80 * time.Millisecond,
			Deadline:       time.Second,
		},
	}
}

// rendered is everything a report renders to.
func rendered(t *testing.T, r *Report) []byte {
	var b bytes.Buffer
	b.WriteString(r.String())
	require.NoError(t, r.WriteSeries(&b))
	require.NoError(t, r.Chart().WriteSVG(&b))
	return b.Bytes()
}

func TestRunIsDeterministic(t *testing.T) {
	first, err := Run(busy(42))
	require.NoError(t, err)
	again, err := Run(busy(42))
	require.NoError(t, err)
	assert.Equal(t, first, again)
	assert.Equal(t, rendered(t, first), rendered(t, again), "byte-identical renderings")

	other, err := Run(busy(43))
	require.NoError(t, err)
	assert.NotEqual(t, first.Seconds, other.Seconds, "another seed, another run")

	require.Positive(t, first.BreakerOpens)
	require.Positive(t, first.RefusedByBreaker)
	require.Positive(t, first.Failed)
	require.Positive(t, first.HedgesSent)
	require.Positive(t, first.HedgesWon)
	assert.Equal(t, first.Offered, first.Served+first.RefusedByBreaker+first.RefusedByBudget+first.RefusedByLimit+first.Failed)

	// With recovery ramps, whose admissions are deficit accounting and whose
	// figures the run reads from the breakers.
	ramped := busy(42)
	ramped.Client.Breaker = &breaker.Config{Recovery: &breaker.Recovery{}}
	rampedFirst, err := Run(ramped)
	require.NoError(t, err)
	rampedAgain, err := Run(ramped)
	require.NoError(t, err)
	require.Positive(t, rampedFirst.Ramps)
	assert.Equal(t, rampedFirst, rampedAgain)
	assert.Equal(t, rendered(t, rampedFirst), rendered(t, rampedAgain), "byte-identical renderings")
}

func TestRunsShareNothing(t *testing.T) {
	want, err := Run(busy(7))
	require.NoError(t, err)
	var wg sync.WaitGroup
	got := make([]*Report, 4)
	for i := range got {
		wg.Go(func() {
			r, err := Run(busy(7))
			assert.NoError(t, err)
			got[i] = r
		})
	}
	wg.Wait()
	for _, r := range got {
		assert.Equal(t, want, r)
	}
}

func TestRunHealthyDependency(t *testing.T) {
	r, err := Run(Config{Duration: 10 * time.Second, Processes: 7, Rate: 3, Dependency: Healthy{}})
	require.NoError(t, err)
	assert.Equal(t, 210, r.Offered, "7 processes x 3 calls a second x 10 s, evenly spaced")
	assert.Equal(t, r.Offered, r.Served)
	assert.Equal(t, r.Offered, r.Attempts)
	assert.Equal(t, 1.0, r.Availability)
	assert.Equal(t, 1.0, r.Amplification)
	for i, s := range r.Seconds[:10] {
		assert.Equal(t, 21, s.Offered, "second %d", i)
	}
	assert.InDelta(t, 20, float64(r.P50)/float64(time.Millisecond), 3)
	assert.Less(t, r.P50, r.P90)
	assert.Less(t, r.P90, r.P99)
	assert.Zero(t, r.BreakerOpens)
	assert.False(t, r.Recovered)
}

func TestRunBreakerOpensAndProbes(t *testing.T) {
	// 10 calls a second, no retry, a fast outage from 5 s to 10 s. The calls at
	// 5.0 .. 5.4 s (plus the phase) fail, the fifth failure opens the breaker for
	// exactly 15 s, the 150 calls offered in the break are refused, and the next
	// two calls are the probes that close it.
	r, err := Run(Config{
		Duration:   30 * time.Second,
		Rate:       10,
		Dependency: Outage{From: 5 * time.Second, To: 10 * time.Second, Base: fixed},
		Client:     Client{Breaker: &breaker.Config{BreakJitter: breaker.JitterNone}},
	})
	require.NoError(t, err)
	assert.Equal(t, 300, r.Offered)
	assert.Equal(t, 5, r.Failed)
	assert.Equal(t, 150, r.RefusedByBreaker)
	assert.Equal(t, 145, r.Served)
	assert.Equal(t, 1, r.BreakerOpens)
	assert.Equal(t, 2, r.Probes)
	assert.Equal(t, 145+5, r.Attempts)
	// Second 20 has five calls refused before the break ends; 21 is whole.
	assert.True(t, r.Recovered)
	assert.Equal(t, 11*time.Second, r.TimeToRecover)
	assert.True(t, r.Stable)
	assert.Equal(t, 11*time.Second, r.TimeToStable)
}

func TestRunTimeoutsCutHangingAttempts(t *testing.T) {
	hang := Outage{Hang: true, Base: fixed} // forever
	constant := retry.Constant{Interval: 100 * time.Millisecond, Jitter: retry.NoJitter}
	t.Run("attempt timeout", func(t *testing.T) {
		r, err := Run(Config{Duration: 5 * time.Second, Rate: 2, Dependency: hang,
			Client: Client{AttemptTimeout: 300 * time.Millisecond, Retry: &Retry{MaxAttempts: 2, Backoff: constant}}})
		require.NoError(t, err)
		assert.Equal(t, 10, r.Failed)
		assert.Equal(t, 20, r.Attempts, "two attempts of 300 ms each")
	})
	t.Run("deadline", func(t *testing.T) {
		// 300 ms, 100 ms backoff, then the second attempt has 100 ms left: it is
		// cut at the deadline and the call stops there, before a third.
		r, err := Run(Config{Duration: 5 * time.Second, Rate: 2, Dependency: hang,
			Client: Client{AttemptTimeout: 300 * time.Millisecond, Deadline: 500 * time.Millisecond, Retry: &Retry{MaxAttempts: 5, Backoff: constant}}})
		require.NoError(t, err)
		assert.Equal(t, 10, r.Failed)
		assert.Equal(t, 20, r.Attempts)
	})
	t.Run("no limit", func(t *testing.T) {
		// With no timeout an attempt hangs until the outage ends.
		r, err := Run(Config{Duration: 2 * time.Second, Rate: 1,
			Dependency: Outage{Hang: true, From: 0, To: 10 * time.Second, Base: fixed}})
		require.NoError(t, err)
		assert.Equal(t, 2, r.Failed)
		assert.Len(t, r.Seconds, 10, "the run lasts until the last attempt ends")
	})
}

// slowCounter is a custom model: every attempt takes 250 ms and succeeds, and
// it records what the simulation told it.
type slowCounter struct{ seen *[]Attempt }

func (m slowCounter) Start() (Dependency, error) { return m, nil }

func (m slowCounter) Respond(a Attempt) Response {
	*m.seen = append(*m.seen, a)
	return Response{Latency: 250 * time.Millisecond}
}

func TestRunTellsTheModelAboutEachAttempt(t *testing.T) {
	var seen []Attempt
	r, err := Run(Config{Duration: 2 * time.Second, Rate: 10, Dependency: slowCounter{&seen},
		Client: Client{AttemptTimeout: time.Second, Deadline: 600 * time.Millisecond}})
	require.NoError(t, err)
	require.Len(t, seen, 20)
	assert.Equal(t, 20, r.Served)
	for i, a := range seen {
		assert.Equal(t, seen[0].At+time.Duration(i)*100*time.Millisecond, a.At, "evenly spaced")
		assert.Equal(t, 600*time.Millisecond, a.Limit, "the deadline is nearer than the attempt timeout")
		assert.Equal(t, min(i, 2), a.InFlight, "250 ms attempts every 100 ms: two in flight")
		assert.NotNil(t, a.Rand)
	}
	assert.Equal(t, 250*time.Millisecond, r.P50)
}

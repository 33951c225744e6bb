package breaker_test

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline/policy/breaker"
)

// reopenRate runs phases half-open phases of a breaker judging probes against
// a fixed 3 × median threshold, with probes drawn from a log-normal whose
// median is factor × the normal one and whose p99 is 5 × its median, and
// returns the share of phases that re-opened on slowness.
func reopenRate(t *testing.T, probeSuccesses int, factor float64, phases int) float64 {
	const median = 10 * time.Millisecond
	sigma := math.Log(5) / 2.3263 // p99 = 5 x p50
	rng := rand.New(rand.NewPCG(7, uint64(factor*100)))
	r := newRig(t, breaker.Config{
		ConsecutiveFailures: 1, BreakJitter: breaker.JitterNone, ProbeSuccesses: probeSuccesses,
		SlowCallThreshold: 3 * median, SlowCalls: breaker.SlowCalls{Disabled: true}, Failures: breaker.Failures{Disabled: true},
	})
	reopened := 0
	for range phases {
		r.b.Reset()
		r.run(fail, 0)
		r.clock.Advance(breaker.DefaultBreakDuration)
		for r.state() == breaker.HalfOpen {
			d := time.Duration(factor * float64(median) * math.Exp(sigma*rng.NormFloat64()))
			r.run(ok, d)
		}
		if r.state() == breaker.Open {
			require.Equal(t, breaker.CauseProbeSlow, r.lastTrip())
			reopened++
		}
	}
	return float64(reopened) / float64(phases)
}

// Slow probes re-open a half-open breaker only once they lead the fast ones
// by ProbeSuccesses: a healthy heavy-tailed dependency re-opens fewer than
// 0.5% of its phases (11% when each of two probes was judged alone), while a
// dependency 3 or 10 times slower than normal re-opens about as the random
// walk says, p² / (p² + q²).
func TestSlowProbesNeedALead(t *testing.T) {
	const phases = 4000
	healthy := reopenRate(t, 2, 1, phases)
	assert.Less(t, healthy, 0.005, "healthy phases re-opened")
	assert.Greater(t, healthy, 0.001, "the tail still shows")
	alone := reopenRate(t, 1, 1, phases)
	assert.InDelta(t, 0.056, alone, 0.01, "judged alone (ProbeSuccesses 1): one slow probe in 18 re-opens")
	assert.InDelta(t, 0.5, reopenRate(t, 2, 3, phases), 0.03, "3 times slower: its median sits on the threshold")
	assert.Greater(t, reopenRate(t, 2, 10, phases), 0.99, "10 times slower")
}

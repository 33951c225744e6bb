package simulation

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline/policy/breaker"
)

func TestReportString(t *testing.T) {
	r := &Report{
		Name: "demo", Seed: 3, Duration: 90 * time.Second, Processes: 2, Rate: 12.5,
		Offered: 100, Served: 90, RefusedByBreaker: 4, RefusedByBudget: 1, Failed: 5, Availability: 0.9,
		Attempts: 130, Amplification: 1.3, WorstSecond: 12, WorstAmplification: 2.25,
		Faults: []Interval{{From: time.Second, To: 2 * time.Second}}, FaultAmplification: 1.8,
		P50: 21340 * time.Microsecond, P90: 50 * time.Millisecond, P99: 1234567 * time.Microsecond,
		BreakerOpens: 3, FirstOpen: 1203 * time.Millisecond, FirstOpenCause: breaker.CauseConsecutiveFailures,
		Probes: 7, PeakProbes: 2, PeakProbesAt: 25400 * time.Millisecond,
		Recovered: true, TimeToRecover: 1500 * time.Millisecond, Stable: true, TimeToStable: 4 * time.Second,
	}
	want := `demo (seed 3): 2 process(es) x 12.5 calls/s for 90s
  offered       100
  served        90 (availability 90.00%)
  refused       4 by breaker, 1 by budget
  failed        5
  attempts      130 (1.300 per call; worst second 12: 2.250; during faults 1.800)
  latency       p50 21.3ms, p90 50.0ms, p99 1234.6ms (served calls, end to end)
  breaker       3 opens (first at 1.203s: consecutive failures), 7 probes (peak 2 per 100ms at 25.4s)
  recovery      1.5s after the last fault ended (stable after 4s)
`
	assert.Equal(t, want, r.String())

	r.Stable = false
	assert.Contains(t, r.String(), "recovery      1.5s after the last fault ended (not stable)\n")
	r.Recovered = false
	assert.Contains(t, r.String(), "recovery      not within the run\n")
	r.Faults = nil
	assert.NotContains(t, r.String(), "during faults")
	assert.Contains(t, r.String(), "recovery      no faults\n")
	r.Name = ""
	assert.True(t, strings.HasPrefix(r.String(), "run (seed 3)"))
	r.BreakerOpens = 0
	assert.Contains(t, r.String(), "  breaker       0 opens, 7 probes", "no first open without opens")
}

func TestReportWriteSeries(t *testing.T) {
	r := &Report{Seconds: []Second{{Offered: 10, Attempts: 12, Served: 8, RefusedByBreaker: 1, Failed: 1}, {Probes: 2}}}
	var b strings.Builder
	require.NoError(t, r.WriteSeries(&b))
	assert.Equal(t, "second\toffered\tattempts\tserved\trefused_breaker\trefused_budget\tfailed\tprobes\n"+
		"0\t10\t12\t8\t1\t0\t1\t0\n"+
		"1\t0\t0\t0\t0\t0\t0\t2\n", b.String())
}

func TestReportStringAndSeriesOfAHedgedRun(t *testing.T) {
	r := &Report{
		Name: "hedged", Rate: 1, Offered: 200, Served: 200, Attempts: 213,
		Hedging: true, HedgesSent: 13, HedgesWon: 9, HedgesSkipped: 2, HedgeDelay: 145300 * time.Microsecond,
		Seconds: []Second{{Offered: 10, Attempts: 12, Served: 10, Hedges: 2}},
	}
	assert.Contains(t, r.String(), "  latency       p50 0.0ms, p90 0.0ms, p99 0.0ms (served calls, end to end)\n"+
		"  hedges        13 sent (0.065 per call; median delay 145.3ms), 9 won, 2 skipped\n"+
		"  breaker       ")
	var b strings.Builder
	require.NoError(t, r.WriteSeries(&b))
	assert.Equal(t, "second\toffered\tattempts\tserved\trefused_breaker\trefused_budget\tfailed\tprobes\thedges\n"+
		"0\t10\t12\t10\t0\t0\t0\t0\t2\n", b.String())

	r.Hedging = false
	assert.NotContains(t, r.String(), "hedges")
}

func TestReportStringAndSeriesOfAJudgedRun(t *testing.T) {
	r := &Report{
		Name: "judged", Rate: 1, Offered: 200, Served: 200, Attempts: 200,
		SlowJudge: &SlowJudge{Quantile: 0.99}, SlowCallRatio: 0.5, Judged: 200, Slow: 3, PeakSlowFraction: 0.0712,
		Seconds: []Second{{Offered: 10, Attempts: 10, Served: 10, Judged: 9, Slow: 1, SlowFraction: 0.01234, Threshold: 97260 * time.Microsecond}},
	}
	assert.Contains(t, r.String(), "  breaker       0 opens, 0 probes (peak 0 per 100ms at 0s)\n"+
		"  slow calls    3 of 200 judged slow by p99 of the last 30s; trip window peak 0.071, never reached 0.5\n")
	var b strings.Builder
	require.NoError(t, r.WriteSeries(&b))
	assert.Equal(t, "second\toffered\tattempts\tserved\trefused_breaker\trefused_budget\tfailed\tprobes\tjudged\tslow\tslow_fraction\tthreshold_ms\n"+
		"0\t10\t10\t10\t0\t0\t0\t0\t9\t1\t0.0123\t97.3\n", b.String())

	r.SlowJudge, r.SlowTrip, r.SlowTripAt, r.SlowCallRatio = &SlowJudge{}, true, 75010*time.Millisecond, 0.6
	assert.Contains(t, r.String(), "judged slow by the breaker's threshold; trip window peak 0.071, reached 0.6 at 75.01s\n")
	r.SlowJudge = &SlowJudge{Threshold: 100 * time.Millisecond}
	assert.Contains(t, r.String(), "judged slow by constant 100.0ms;")
	r.SlowJudge = &SlowJudge{Quantile: 0.5, Window: 5 * time.Minute}
	assert.Contains(t, r.String(), "judged slow by p50 of the last 300s;")
	r.SlowJudge = nil
	assert.NotContains(t, r.String(), "slow calls")
}

func TestReportStringAndSeriesOfARampedRun(t *testing.T) {
	r := &Report{
		Name: "ramped", Rate: 1, Offered: 200, Served: 150, RefusedByBreaker: 50, Attempts: 150,
		BreakerOpens: 2, FirstOpen: 30 * time.Second, FirstOpenCause: breaker.CauseConsecutiveFailures,
		Ramping: true, Ramps: 2, RampsDone: 1, RampsFailed: 1,
		Seconds: []Second{{Offered: 10, Attempts: 4, Served: 4, RefusedByBreaker: 6, Ramping: 10, RampFraction: 0.41234, RampHeld: 0.5}},
	}
	assert.Contains(t, r.String(), "  breaker       2 opens (first at 30s: consecutive failures), 0 probes (peak 0 per 100ms at 0s)\n"+
		"  ramps         2 started: 1 closed the breaker, 1 re-opened it\n")
	var b strings.Builder
	require.NoError(t, r.WriteSeries(&b))
	assert.Equal(t, "second\toffered\tattempts\tserved\trefused_breaker\trefused_budget\tfailed\tprobes\tramping\tramp_fraction\tramp_held\n"+
		"0\t10\t4\t4\t6\t0\t0\t0\t10\t0.4123\t0.5000\n", b.String())

	r.Ramping = false
	assert.NotContains(t, r.String(), "ramps")
}

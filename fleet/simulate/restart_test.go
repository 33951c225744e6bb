package simulate

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline/simulation"
)

// tripAfter is the breaker's default ConsecutiveFailures: the failures in a
// row that open a fresh breaker.
const tripAfter = 5

// A quarter of the fleet restarted during the outage, every process open
// by then: a shared process's Watch finds the quorum open and starts its
// fresh breaker forced open, so it refuses its very first call and sends
// the dead dependency nothing; an independent one must fail
// ConsecutiveFailures times first. So the restarts cost the independent
// breakers 250 more doomed calls, and the quorum none.
func TestRestartedProcessesStartOpen(t *testing.T) {
	rs := failureReports(t)
	for _, label := range []string{"naive", "quorum"} {
		r := find(t, rs, "restarts", label)
		require.Len(t, r.Restarts, 50, label)
		for _, x := range r.Restarts {
			assert.Zero(t, x.Doomed, "%s: process %d", label, x.Process)
			assert.GreaterOrEqual(t, x.Stop, time.Duration(0), "%s: process %d", label, x.Process)
			assert.Less(t, x.Stop, 500*time.Millisecond, "%s: process %d refused its first call", label, x.Process)
		}
	}
	ind := find(t, rs, "restarts", "independent")
	for _, x := range ind.Restarts {
		assert.Equal(t, tripAfter, x.Doomed, "process %d", x.Process)
		assert.GreaterOrEqual(t, x.Stop, 2500*time.Millisecond, "process %d: five failures, then a refusal, at 2 calls a second", x.Process)
	}

	outage := reports(t) // the same outage without restarts
	before := Find(outage, "outage", Independent).Totals().Doomed
	assert.GreaterOrEqual(t, ind.Totals().Doomed, before+200, "independent: the restarts cost about 5 doomed calls each")
	before = Find(outage, "outage", Quorum).Totals().Doomed
	assert.LessOrEqual(t, find(t, rs, "restarts", "quorum").Totals().Doomed, before, "quorum: the restarts cost nothing")
}

// Watch waits on Redis before it returns: a restarted process calls only
// once its read is back, and a read that fails (Redis absent) leaves it on
// its own, as an independent process. (40 processes keep the test short
// under the race detector; the rules do not depend on the fleet's size.)
func TestRestartedProcessesWaitForWatch(t *testing.T) {
	run := func(redis simulation.Model, from, to time.Duration) *Report {
		restart := Restart{Share: 0.25, During: simulation.Interval{From: from, To: to}}
		r, err := Run(Config{Seed: 1, Processes: 40, Strategy: Quorum, Situation: Outage, Restart: restart, Redis: redis})
		require.NoError(t, err)
		require.Len(t, r.Restarts, 10)
		return r
	}

	// From 35 s, once the quorum has formed.
	r := run(SteadyRedis, 35*time.Second, 45*time.Second)
	for _, x := range r.Restarts {
		assert.Zero(t, x.Doomed, "process %d", x.Process)
		assert.GreaterOrEqual(t, x.Stop, 400*time.Millisecond, "process %d: no call before Watch returned", x.Process)
	}

	// Redis absent from 20 s to 40 s: every Watch fails, and each new
	// process, restarted from 32 s to 35.6 s, trips on its own five
	// failures, by 38.1 s.
	r = run(AbsentRedis, 32*time.Second, 36*time.Second)
	for _, x := range r.Restarts {
		assert.Equal(t, tripAfter, x.Doomed, "process %d", x.Process)
	}
	assert.Equal(t, 40+10, r.Degraded, "once per fleet, the new processes' included")
}

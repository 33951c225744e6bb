package simulate

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline/simulation"
)

// A Redis that answers every round trip in 400 ms, within the timeout,
// shows each round what an instant one shows it (the reports of the rounds
// that began before it), 400 ms later: so no breaker opens more than one
// round trip later than with an instant Redis, and none earlier.
func TestSteadyRedisDelaysOpeningByOneRoundTrip(t *testing.T) {
	rs := failureReports(t)
	instant, steady := find(t, rs, "slow-redis", "quorum, Redis instant"), find(t, rs, "slow-redis", "quorum, Redis 400 ms")
	assert.Zero(t, steady.FailedRounds)
	lo, hi, _ := openedLater(steady, instant)
	assert.GreaterOrEqual(t, lo, time.Duration(0), "no breaker opened earlier")
	assert.LessOrEqual(t, hi, 400*time.Millisecond, "nor more than a round trip later")
	assert.Positive(t, hi, "the followers did open later")
}

// A slow Redis (200 ms median, 1 s p99) makes 9% of the rounds time out:
// they apply nothing and raise Degraded, and the breaks they would have
// renewed may lapse. The quorum still spares the uneven fleet most of what
// it spares it with an instant Redis.
func TestSlowRedisCostsTheQuorumLittle(t *testing.T) {
	rs := failureReports(t)
	ind, instant, slow := find(t, rs, "slow-redis", "independent"),
		find(t, rs, "slow-redis", "quorum, Redis instant"), find(t, rs, "slow-redis", "quorum, Redis slow")
	require.Positive(t, slow.Rounds)
	assert.InDelta(t, 0.093, float64(slow.FailedRounds)/float64(slow.Rounds), 0.02, "the log-normal's share above 500 ms")
	assert.Positive(t, slow.Degraded)
	assert.LessOrEqual(t, slow.Degraded, slow.FailedRounds)
	assert.Less(t, float64(slow.Totals().Doomed), 1.05*float64(instant.Totals().Doomed), "under 5% more doomed calls")
	assert.Greater(t, float64(ind.Totals().Doomed)/float64(slow.Totals().Doomed), 1.15, "still well under independent")
	_, _, mean := openedLater(slow, instant)
	assert.Less(t, mean, 300*time.Millisecond, "breakers open about a round trip later on average")
}

// A Redis slower than the round's timeout is no Redis at all: every round
// fails, the fleet forces nothing, and the processes make exactly the
// calls of independent ones. (50 processes keep it short under the race
// detector.)
func TestRedisSlowerThanTheTimeoutIsAbsent(t *testing.T) {
	run := func(st Strategy, redis simulation.Model) *Report {
		r, err := Run(Config{Seed: 1, Processes: 50, Strategy: st, Situation: Outage, Rates: UnevenRates, Redis: redis})
		require.NoError(t, err)
		return r
	}
	steady := func(d time.Duration) simulation.Model { return simulation.Healthy{P50: d, P99: d} }
	r := run(Quorum, steady(501*time.Millisecond))
	assert.Equal(t, r.Rounds, r.FailedRounds)
	assert.Equal(t, 50, r.Degraded, "once per process")
	assert.Zero(t, r.Follows)
	assert.Equal(t, run(Independent, nil).Seconds, r.Seconds)

	r = run(Quorum, steady(500*time.Millisecond))
	assert.Zero(t, r.FailedRounds, "a trip of exactly the timeout is in time")
	assert.Positive(t, r.Follows)
}

// With Redis absent from 20 s to 40 s, each process runs on its own: until
// Redis returns the quorum makes exactly the independent breakers' calls,
// second by second, every one of the 20 rounds of each process fails, and
// each raises Degraded once. Once Redis is back, the quorum forms again
// within a refresh (the first rounds after the return see only the few
// reports published since), and every breaker still closed follows.
func TestAbsentRedisLeavesEachProcessOnItsOwn(t *testing.T) {
	rs := failureReports(t)
	ind, absent := find(t, rs, "absent-redis", "independent"), find(t, rs, "absent-redis", "quorum, Redis absent")
	assert.Equal(t, ind.Seconds[:40], absent.Seconds[:40], "the same calls until Redis returns")
	assert.NotEqual(t, ind.Seconds, absent.Seconds, "then the quorum")
	assert.Equal(t, 20*defaultProcesses, absent.FailedRounds)
	assert.Equal(t, defaultProcesses, absent.Degraded)
	assert.LessOrEqual(t, absent.Totals().Doomed, ind.Totals().Doomed, "no worse than independent")

	open, ok := ind.TimeToOpen(1, true)
	require.True(t, ok)
	require.Greater(t, open, 12*time.Second, "without sharing, some breakers are still closed after 12 s")
	open, ok = absent.TimeToOpen(1, true)
	require.True(t, ok)
	assert.Less(t, open, 12*time.Second, "every breaker opened within two refreshes of Redis's return at 10 s")
}

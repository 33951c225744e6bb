package fleet

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline/fleet/internal/redistest"
	"github.com/resilience-go/pipeline/policy/breaker"
)

// On a cluster of three masters, breakers whose hash tags land on every
// master behave as on one Redis (fleet_test.go): each breaker's four keys
// share one slot, and the reports are on the master that serves it; a
// minority opens nobody; a quorum of each breaker opens the others, on that
// breaker only; they recover once the quorum does; and the fleet-wide
// switch reaches everyone. (Package fleet/quota's TestClusterSpread does
// the same for quotas.)
func TestClusterSpread(t *testing.T) {
	c := redistest.NewCluster(t)
	tp := c.Settled()
	require.Len(t, tp, 3, "three masters")
	ns := namespace(t)
	names := redistest.Spread(t, tp, "dep", func(name string) int { return breakerSlot(c, ns, name) })
	t.Logf("breakers %v on masters %v", names, tp.Masters())
	ps := startClusterProcs(t, c.Addrs, ns, 5, names...)
	ctx := context.Background()
	for i, name := range names {
		// The client routes the keys to the master the test found for them.
		node, err := ps[0].rdb.MasterForKey(ctx, keysOf(ns, name).seen)
		require.NoError(t, err)
		assert.Equal(t, tp[i].Master, node.Options().Addr, "the client's master for %s", name)
		clusterReports(t, c.Nodes[tp[i].Master], ns, name, reportClosed, 5)
	}

	// A minority: one process of five opens nobody else.
	ps[0].trip(t, names[0])
	clusterReports(t, c.Nodes[tp[0].Master], ns, names[0], reportOpen, 1)
	clusterRounds(t, 3, ps...)
	for _, p := range ps[1:] {
		assert.Equal(t, breaker.Closed, p.bs[names[0]].State(), "process %s", p.id)
	}
	// A quorum of each breaker, three processes starting at the i-th,
	// opens the other two: the breakers of the other masters are left alone.
	for i, name := range names {
		for j := range 3 {
			if p := ps[(i+j)%5]; p.bs[name].State() != breaker.Open {
				p.trip(t, name)
			}
		}
		for j := 3; j < 5; j++ {
			p := ps[(i+j)%5]
			require.Eventually(t, func() bool { return p.refuses(name) }, wait, tick, "process %s follows %s", p.id, name)
		}
		clusterReports(t, c.Nodes[tp[i].Master], ns, name, reportOpen, 3)
		clusterReports(t, c.Nodes[tp[i].Master], ns, name, reportFollowing, 2)
		for _, later := range names[i+1:] {
			for _, p := range ps {
				assert.Equal(t, breaker.Closed, p.bs[later].State(), "process %s, %s", p.id, later)
			}
		}
	}
	// Recovery: the quorum closes after its breaks, the followers' breaks
	// run out, and they close on their own probes.
	for i, name := range names {
		for j := range 3 {
			ps[(i+j)%5].recover(t, name)
		}
		recoverAll(t, c.Nodes[tp[i].Master], ns, name, ps)
	}
	// The switch of the breaker on the last master reaches every process.
	require.NoError(t, ps[0].f.Isolate(ctx, names[2]))
	for _, p := range ps {
		require.Eventually(t, func() bool { return p.bs[names[2]].State() == breaker.Isolated }, wait, tick, "process %s", p.id)
	}
	require.NoError(t, ps[4].f.Reset(ctx, names[2]))
	for _, p := range ps {
		require.Eventually(t, func() bool { return p.bs[names[2]].State() == breaker.Closed }, wait, tick, "process %s", p.id)
	}

}

// A replica promoted while the processes run (CLUSTER FAILOVER, sent to
// it), its master holding the slot of a breaker a quorum has opened:
//   - no breaker is stuck: every fleet's rounds succeed again, each outage
//     it raised Degraded for ends with Recovered; the followers' breaks are
//     renewed from the promoted replica, the quorum recovers and so do the
//     followers, and a new quorum opens them again;
//   - the promoted replica, whose script cache the test emptied, has the
//     summary's script once the processes run on it: their EVALSHA met
//     NOSCRIPT, and the round sent it again by EVAL.
//
// The cluster is failed back at the end, for the tests that follow.
// (Package fleet/quota's TestClusterFailover does the same for a quota,
// and checks its bound through the failover.)
func TestClusterFailover(t *testing.T) {
	c := redistest.NewCluster(t)
	before := c.Settled()
	require.Len(t, before, 3, "three masters")
	t.Cleanup(func() { c.Restore(before) }) // last, once the processes have closed
	ns := namespace(t)
	names := redistest.Spread(t, before, "dep", func(name string) int { return breakerSlot(c, ns, name) })
	moved, steady := names[0], names[1] // moved on the first master
	master, replica := before[0].Master, before[0].Replicas[0]
	ctx := context.Background()

	ps := startClusterProcs(t, c.Addrs, ns, 5, moved, steady)
	// Redis does not replicate scripts, but a replica that was a master
	// before (an earlier failover, failed back) keeps what it loaded then.
	require.NoError(t, c.Nodes[replica].ScriptFlush(ctx).Err())
	has, err := c.Nodes[replica].ScriptExists(ctx, summary.Hash()).Result()
	require.NoError(t, err)
	require.Equal(t, []bool{false}, has, "the replica has not the summary's script")

	for _, p := range ps[:3] {
		p.trip(t, moved)
	}
	for _, p := range ps[3:] {
		require.Eventually(t, func() bool { return p.refuses(moved) }, wait, tick, "process %s follows", p.id)
	}
	clusterReports(t, c.Nodes[master], ns, moved, reportOpen, 3)

	// The failover.
	_, took := c.Promote(replica, master, breakerSlot(c, ns, moved))

	// The fleets come back, and the promoted replica has their script.
	for _, p := range ps {
		from := p.f.rounds.Load()
		require.Eventually(t, func() bool {
			errs, afters := p.outages()
			return p.f.rounds.Load() >= from+3 && !p.f.Degraded() && len(afters) == len(errs)
		}, wait, tick, "process %s's rounds succeed again", p.id)
	}
	require.Eventually(t, func() bool {
		return c.Scripted(replica, summary.Hash())
	}, wait, tick, "the rounds sent their script again by EVAL")

	// The followers' breaks are renewed from the promoted replica: each
	// passes on its clock, and the next round forces it again.
	clusterReports(t, c.Nodes[replica], ns, moved, reportOpen, 3)
	clusterReports(t, c.Nodes[replica], ns, moved, reportFollowing, 2)
	for _, p := range ps[3:] {
		clock := p.clocks[moved]
		clock.Advance(2*clusterRefresh + time.Millisecond)
		require.Eventually(t, func() bool {
			s := p.bs[moved].Snapshot()
			return s.State == breaker.Open && s.BreakEnds.After(clock.Now())
		}, wait, tick, "process %s's break is renewed", p.id)
	}
	// The quorum recovers, then the followers; a new quorum opens them again.
	for _, p := range ps[:3] {
		p.recover(t, moved)
	}
	recoverAll(t, c.Nodes[replica], ns, moved, ps)
	for _, p := range ps[:3] {
		p.trip(t, moved)
	}
	for _, p := range ps[3:] {
		require.Eventually(t, func() bool { return p.refuses(moved) }, wait, tick, "process %s follows again", p.id)
		assert.Equal(t, 2, p.events.count("fleet.followed"), "process %s", p.id)
	}
	for _, p := range ps {
		assert.Equal(t, breaker.Closed, p.bs[steady].State(), "process %s: the breaker on another master", p.id)
	}

	var outages []time.Duration
	errs := map[string]int{} // the errors of the outages, and how many began with each
	for _, p := range ps {
		es, afters := p.outages()
		outages = append(outages, afters...)
		for _, e := range es {
			errs[e]++
		}
	}
	t.Logf("promoted %v after CLUSTER FAILOVER; the fleets' outages %v, with %v", took, outages, errs)
}

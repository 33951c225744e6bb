package fleet

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/policy/breaker"
)

// spread returns, for each shard of tp in order, the first name prefix-i
// whose keys slotOf puts on a slot of that shard: names on every master.
func spread(t *testing.T, tp topology, prefix string, slotOf func(name string) int) []string {
	t.Helper()
	names := make([]string, len(tp))
	left := len(tp)
	for i := 0; left > 0; i++ {
		require.Less(t, i, 1000, "no name of %s-i on every master", prefix)
		name := fmt.Sprintf("%s-%d", prefix, i)
		master := tp.shardOf(slotOf(name)).master
		for j, s := range tp {
			if s.master == master && names[j] == "" {
				names[j] = name
				left--
			}
		}
	}
	return names
}

// On a cluster of three masters, breakers and quotas whose hash tags land
// on every master behave as on one Redis (fleet_test.go, quota_test.go):
// each breaker's four keys share one slot, and the reports are on the
// master that serves it; a minority opens nobody; a quorum of each breaker
// opens the others, on that breaker only; they recover once the quorum
// does; the fleet-wide switch reaches everyone; and each quota admits no
// more than its bound, Rate × t + Burst + processes × Lease, however many
// goroutines call it at once, while the other masters' quotas are spent.
func TestClusterSpread(t *testing.T) {
	addrs := clusterAddrs(t)
	c := newCluster(t)
	tp := c.settled()
	require.Len(t, tp, 3, "three masters")
	ns := namespace(t)
	names := spread(t, tp, "dep", func(name string) int { return c.breakerSlot(ns, name) })
	quotas := spread(t, tp, "partner", func(name string) int { return c.quotaSlot(ns, name) })
	t.Logf("breakers %v and quotas %v on masters %v", names, quotas, tp.masters())
	ps := startClusterProcs(t, addrs, ns, 5, names...)
	ctx := context.Background()
	for i, name := range names {
		// The client routes the keys to the master the test found for them.
		node, err := ps[0].rdb.MasterForKey(ctx, keysOf(ns, name).seen)
		require.NoError(t, err)
		assert.Equal(t, tp[i].master, node.Options().Addr, "the client's master for %s", name)
		clusterReports(t, c.nodes[tp[i].master], ns, name, reportClosed, 5)
	}

	// A minority: one process of five opens nobody else.
	ps[0].trip(t, names[0])
	clusterReports(t, c.nodes[tp[0].master], ns, names[0], reportOpen, 1)
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
		clusterReports(t, c.nodes[tp[i].master], ns, name, reportOpen, 3)
		clusterReports(t, c.nodes[tp[i].master], ns, name, reportFollowing, 2)
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
		recoverAll(t, c.nodes[tp[i].master], ns, name, ps)
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

	// The quotas: each process shares the three, and spends them all at
	// once. Fetches may take a second, so that a loaded machine does not
	// make the test one of an outage (as TestQuotaFleetHammer).
	const rate, burst, d = 500.0, 100, 2 * time.Second
	start := time.Now()
	qs := make([][]*Quota, len(quotas)) // by quota, then process
	var logs []*quotaLog
	for i, name := range quotas {
		for _, p := range ps {
			q, l := startQuota(t, p, QuotaConfig{Namespace: ns, Name: name, Rate: rate, Burst: burst,
				Processes: len(ps), Timeout: time.Second})
			qs[i] = append(qs[i], q)
			logs = append(logs, l)
		}
	}
	admitted := make([][]int64, len(quotas))
	var wg sync.WaitGroup
	for i := range qs {
		admitted[i] = make([]int64, len(ps))
		for j, q := range qs[i] {
			wg.Go(func() { admitted[i][j], _ = hammer(q, 2, d) })
		}
	}
	wg.Wait()
	elapsed := time.Since(start).Seconds()
	for i, name := range quotas {
		var total int64
		for _, n := range admitted[i] {
			total += n
		}
		lease := float64(qs[i][0].Lease())
		bound := rate*elapsed + burst + float64(len(ps))*lease
		t.Logf("quota %s on %s: admitted %d in %.3fs, %.1f%% of Rate × t; bound %.0f", name, tp[i].master,
			total, elapsed, 100*float64(total)/(rate*elapsed), bound)
		assert.LessOrEqual(t, float64(total), bound, "quota %s: Rate × t + Burst + processes × Lease", name)
		assert.GreaterOrEqual(t, float64(total), 0.5*rate*elapsed, "quota %s is used", name)
		// Its keys are on the master the test found for them.
		n, err := c.nodes[tp[i].master].Exists(ctx, quotaKeysOf(ns, name).seen).Result()
		require.NoError(t, err)
		assert.Equal(t, int64(1), n, "quota %s's processes on %s", name, tp[i].master)
	}
	for _, l := range logs {
		errs, _ := l.recovered()
		assert.Empty(t, errs, "quota %s of process %s: no outage", l.cfg.Name, l.cfg.Process)
	}
}

// outage is a stretch a quota spent degraded, as its events tell it: from
// the At of Degraded, read before the quota turned degraded, to when the
// hook heard Recovered, after it turned back (zero while it lasts), so that
// it holds every call the local share admitted. rate and burst are that
// share's: Rate/seen and Burst/seen (at least 1), seen the processes the
// quota counted when the outage began (Processes before it ever did).
type outage struct {
	from, to time.Time
	rate     float64
	burst    int
}

// quotaLog keeps a quota's outages, their errors, and how long each lasted
// as Recovered said.
type quotaLog struct {
	mu      sync.Mutex
	q       *Quota // set once NewQuota has returned; nil during its first fetch
	cfg     QuotaConfig
	outages []outage
	errs    []string // each outage's, from Degraded
	afters  []time.Duration
}

func (l *quotaLog) hook(_ context.Context, src pipeline.Source, e pipeline.Event) {
	if src.Stage != QuotaKind || src.Name != l.cfg.Name {
		panic("quota event from source " + src.Stage + " " + src.Name)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch e := e.(type) {
	case Degraded:
		seen := l.cfg.Processes
		if l.q != nil && l.q.Seen() > 0 { // the hook runs where the share was just built from it
			seen = l.q.Seen()
		}
		l.outages = append(l.outages, outage{from: e.At, rate: l.cfg.Rate / float64(seen),
			burst: max(1, l.cfg.Burst/seen)})
		l.errs = append(l.errs, e.Err.Error())
	case Recovered:
		l.outages[len(l.outages)-1].to = time.Now()
		l.afters = append(l.afters, e.After)
	}
}

// shares is the most the quota's local shares can have admitted by at: for
// each outage begun by then, its burst and its rate over the part of it
// before at.
func (l *quotaLog) shares(at time.Time) float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	var n float64
	for _, o := range l.outages {
		if o.from.After(at) {
			continue
		}
		to := o.to
		if to.IsZero() || to.After(at) {
			to = at
		}
		n += float64(o.burst) + o.rate*to.Sub(o.from).Seconds()
	}
	return n
}

// recovered returns the errors the quota raised Degraded with, one an
// outage, and how long each outage it has come back from lasted, as
// Recovered measured it.
func (l *quotaLog) recovered() (errs []string, afters []time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.errs), slices.Clone(l.afters)
}

// startQuota starts a quota of cfg for process p, logging its outages, and
// closes it at the end of the test (before p's client).
func startQuota(t *testing.T, p *clusterProc, cfg QuotaConfig) (*Quota, *quotaLog) {
	t.Helper()
	l := &quotaLog{}
	cfg.Redis, cfg.Process, cfg.OnEvent = p.rdb, p.id, l.hook
	l.cfg = cfg
	q, err := NewQuota(cfg)
	require.NoError(t, err)
	l.mu.Lock()
	l.q = q
	l.mu.Unlock()
	t.Cleanup(q.Close)
	return q, l
}

// A replica promoted while the processes run (CLUSTER FAILOVER, sent to
// it), its master holding the slot of a breaker a quorum has opened and of
// a quota fifteen goroutines of five processes spend:
//   - the quota never admits more than its bound, Rate × t + Burst +
//     processes × Lease, plus what its local shares admit in the outages
//     its processes go through, each Rate/seen a second and a burst of
//     Burst/seen (fleet.md, "Redis Cluster"), at any moment of the run;
//   - no breaker is stuck: every fleet's rounds succeed again, each outage
//     it raised Degraded for ends with Recovered; the followers' breaks are
//     renewed from the promoted replica, the quorum recovers and so do the
//     followers, and a new quorum opens them again;
//   - the promoted replica, whose script cache the test emptied, has both
//     scripts once the processes run on it: their EVALSHA met NOSCRIPT, and
//     the round and the fetch sent them again by EVAL.
//
// The cluster is failed back at the end, for the tests that follow.
func TestClusterFailover(t *testing.T) {
	addrs := clusterAddrs(t)
	c := newCluster(t)
	before := c.settled()
	require.Len(t, before, 3, "three masters")
	t.Cleanup(func() { c.restore(before) }) // last, once the processes have closed
	ns := namespace(t)
	names := spread(t, before, "dep", func(name string) int { return c.breakerSlot(ns, name) })
	quotas := spread(t, before, "partner", func(name string) int { return c.quotaSlot(ns, name) })
	moved, steady, quota := names[0], names[1], quotas[0] // moved and quota on the first master
	master, replica := before[0].master, before[0].replicas[0]
	ctx := context.Background()

	ps := startClusterProcs(t, addrs, ns, 5, moved, steady)
	const rate, burst = 1000.0, 200
	start := time.Now() // before the first lease
	qs := make([]*Quota, len(ps))
	logs := make([]*quotaLog, len(ps))
	for i, p := range ps {
		qs[i], logs[i] = startQuota(t, p, QuotaConfig{Namespace: ns, Name: quota, Rate: rate, Burst: burst, Processes: len(ps)})
	}
	lease := float64(qs[0].Lease())
	// Redis does not replicate scripts, but a replica that was a master
	// before (an earlier failover, failed back) keeps what it loaded then.
	require.NoError(t, c.nodes[replica].ScriptFlush(ctx).Err())
	has, err := c.nodes[replica].ScriptExists(ctx, summary.Hash(), take.Hash()).Result()
	require.NoError(t, err)
	require.Equal(t, []bool{false, false}, has, "the replica has neither the summary's script nor the quota's")

	counts := make([]atomic.Int64, len(qs))
	var spenders sync.WaitGroup
	stop := make(chan struct{})
	halt := sync.OnceFunc(func() { close(stop); spenders.Wait() })
	t.Cleanup(halt) // before the quotas close
	for i, q := range qs {
		spend(&spenders, q, 3, &counts[i], stop)
	}
	samples := sampler(&spenders, counts, stop)
	require.Eventually(t, func() bool {
		for _, q := range qs {
			if q.Seen() != len(qs) {
				return false
			}
		}
		return true
	}, wait, tick, "every quota counts the five processes: each share is Rate/5")
	for _, p := range ps[:3] {
		p.trip(t, moved)
	}
	for _, p := range ps[3:] {
		require.Eventually(t, func() bool { return p.refuses(moved) }, wait, tick, "process %s follows", p.id)
	}
	clusterReports(t, c.nodes[master], ns, moved, reportOpen, 3)

	// The failover.
	asked := time.Now()
	after := c.failover(replica)
	took := time.Since(asked)
	slot := c.breakerSlot(ns, moved)
	require.Equal(t, replica, after.shardOf(slot).master, "the replica serves the breaker's slot")
	require.Equal(t, replica, after.shardOf(c.quotaSlot(ns, quota)).master, "and the quota's")
	require.Contains(t, after.shardOf(slot).replicas, master, "its master is its replica now")
	require.Equal(t, "master", c.role(replica))
	require.Equal(t, "slave", c.role(master))

	// The fleets and the quotas come back, and the promoted replica has
	// their scripts.
	for _, p := range ps {
		from := p.f.rounds.Load()
		require.Eventually(t, func() bool {
			errs, afters := p.outages()
			return p.f.rounds.Load() >= from+3 && !p.f.Degraded() && len(afters) == len(errs)
		}, wait, tick, "process %s's rounds succeed again", p.id)
	}
	for i, q := range qs {
		from := q.fetches.Load()
		require.Eventually(t, func() bool {
			errs, afters := logs[i].recovered()
			return q.fetches.Load() > from && !q.Degraded() && len(afters) == len(errs)
		}, wait, tick, "process %s's quota fetches again", ps[i].id)
	}
	require.Eventually(t, func() bool {
		return c.scripted(replica, summary.Hash(), take.Hash())
	}, wait, tick, "the rounds and the fetches sent their scripts again by EVAL")

	// The followers' breaks are renewed from the promoted replica: each
	// passes on its clock, and the next round forces it again.
	clusterReports(t, c.nodes[replica], ns, moved, reportOpen, 3)
	clusterReports(t, c.nodes[replica], ns, moved, reportFollowing, 2)
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
	recoverAll(t, c.nodes[replica], ns, moved, ps)
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

	// The quota's bound, at every moment sampled and at the end.
	halt()
	var total int64
	for i := range counts {
		total += counts[i].Load()
	}
	*samples = append(*samples, sample{at: time.Now(), n: total})
	bound := func(at time.Time) (all, shares float64) {
		for _, l := range logs {
			shares += l.shares(at)
		}
		return rate*at.Sub(start).Seconds() + burst + float64(len(qs))*lease + shares, shares
	}
	var worst sample // the sample closest to its bound, or furthest over it
	excess := math.Inf(-1)
	for _, s := range *samples {
		if b, _ := bound(s.at); float64(s.n)-b > excess {
			worst, excess = s, float64(s.n)-b
		}
	}
	end := (*samples)[len(*samples)-1]
	endBound, shares := bound(end.at)
	worstBound, _ := bound(worst.at)
	var fleetOutages, quotaOutages []time.Duration
	errs := map[string]int{} // the errors of the outages, and how many began with each
	for i := range ps {
		es, afters := ps[i].outages()
		fleetOutages = append(fleetOutages, afters...)
		for _, e := range es {
			errs["fleet: "+e]++
		}
		es, afters = logs[i].recovered()
		quotaOutages = append(quotaOutages, afters...)
		for _, e := range es {
			errs["quota: "+e]++
		}
	}
	t.Logf("promoted %v after CLUSTER FAILOVER; the fleets' outages %v, the quotas' %v, with %v; "+
		"admitted %d in %.3fs, bound %.0f (%.0f of it the local shares); closest to the bound: %d at %.3fs, bound %.0f; %d samples",
		took, fleetOutages, quotaOutages, errs, end.n, end.at.Sub(start).Seconds(), endBound, shares,
		worst.n, worst.at.Sub(start).Seconds(), worstBound, len(*samples))
	assert.LessOrEqual(t, float64(worst.n), worstBound, "at %v: Rate × t + Burst + processes × Lease + the local shares",
		worst.at.Sub(start))
	assert.LessOrEqual(t, float64(end.n), endBound, "at the end")
}

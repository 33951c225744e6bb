package quota

import (
	"context"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/fleet"
	"github.com/resilience-go/pipeline/fleet/internal/redistest"
)

// quotaSlot is the slot of a quota's keys on the cluster c.
func quotaSlot(c *redistest.Cluster, ns, name string) int {
	k := keysOf(ns, name)
	return c.Slot(k.tat, k.seen)
}

// clusterProc is one process of a service on the cluster: its own cluster
// client, closed at the end of the test.
type clusterProc struct {
	id  string
	rdb *redis.ClusterClient
}

// startClusterProcs starts n processes, "a", "b" and so on.
func startClusterProcs(t *testing.T, addrs []string, n int) []*clusterProc {
	t.Helper()
	ps := make([]*clusterProc, n)
	for i := range ps {
		ps[i] = &clusterProc{id: string(rune('a' + i)), rdb: redistest.ClusterClient(t, addrs)}
	}
	return ps
}

// On a cluster of three masters, quotas whose hash tags land on every
// master behave as on one Redis (quota_test.go): each quota's two keys share
// one slot, and they are on the master that serves it; and each quota
// admits no more than its bound, Rate × t + Burst + processes × Lease,
// however many goroutines call it at once, while the other masters' quotas
// are spent. (Package fleet's TestClusterSpread does the same for
// breakers.)
func TestClusterSpread(t *testing.T) {
	c := redistest.NewCluster(t)
	tp := c.Settled()
	require.Len(t, tp, 3, "three masters")
	ns := namespace(t)
	quotas := redistest.Spread(t, tp, "partner", func(name string) int { return quotaSlot(c, ns, name) })
	t.Logf("quotas %v on masters %v", quotas, tp.Masters())
	ps := startClusterProcs(t, c.Addrs, 5)
	ctx := context.Background()

	// The quotas: each process shares the three, and spends them all at
	// once. Fetches may take a second, so that a loaded machine does not
	// make the test one of an outage (as TestQuotaFleetHammer).
	const rate, burst, d = 500.0, 100, 2 * time.Second
	start := time.Now()
	qs := make([][]*Quota, len(quotas)) // by quota, then process
	var logs []*quotaLog
	for i, name := range quotas {
		for _, p := range ps {
			q, l := startQuota(t, p, Config{Namespace: ns, Name: name, Rate: rate, Burst: burst,
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
		t.Logf("quota %s on %s: admitted %d in %.3fs, %.1f%% of Rate × t; bound %.0f", name, tp[i].Master,
			total, elapsed, 100*float64(total)/(rate*elapsed), bound)
		assert.LessOrEqual(t, float64(total), bound, "quota %s: Rate × t + Burst + processes × Lease", name)
		assert.GreaterOrEqual(t, float64(total), 0.5*rate*elapsed, "quota %s is used", name)
		// Its keys are on the master the test found for them.
		n, err := c.Nodes[tp[i].Master].Exists(ctx, keysOf(ns, name).seen).Result()
		require.NoError(t, err)
		assert.Equal(t, int64(1), n, "quota %s's processes on %s", name, tp[i].Master)
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
	q       *Quota // set once New has returned; nil during its first fetch
	cfg     Config
	outages []outage
	errs    []string // each outage's, from Degraded
	afters  []time.Duration
}

func (l *quotaLog) hook(_ context.Context, src pipeline.Source, e pipeline.Event) {
	if src.Stage != stageKind || src.Name != l.cfg.Name {
		panic("quota event from source " + src.Stage + " " + src.Name)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch e := e.(type) {
	case fleet.Degraded:
		seen := l.cfg.Processes
		if l.q != nil && l.q.Seen() > 0 { // the hook runs where the share was just built from it
			seen = l.q.Seen()
		}
		l.outages = append(l.outages, outage{from: e.At, rate: l.cfg.Rate / float64(seen),
			burst: max(1, l.cfg.Burst/seen)})
		l.errs = append(l.errs, e.Err.Error())
	case fleet.Recovered:
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
func startQuota(t *testing.T, p *clusterProc, cfg Config) (*Quota, *quotaLog) {
	t.Helper()
	l := &quotaLog{}
	cfg.Redis, cfg.Process, cfg.OnEvent = p.rdb, p.id, l.hook
	l.cfg = cfg
	q, err := New(cfg)
	require.NoError(t, err)
	l.mu.Lock()
	l.q = q
	l.mu.Unlock()
	t.Cleanup(q.Close)
	return q, l
}

// A replica promoted while the processes run (CLUSTER FAILOVER, sent to
// it), its master holding the slot of a quota fifteen goroutines of five
// processes spend:
//   - the quota never admits more than its bound, Rate × t + Burst +
//     processes × Lease, plus what its local shares admit in the outages
//     its processes go through, each Rate/seen a second and a burst of
//     Burst/seen (fleet.md, "Redis Cluster"), at any moment of the run;
//   - every quota fetches from the promoted replica again, and each outage
//     it raised Degraded for ends with Recovered;
//   - the promoted replica, whose script cache the test emptied, has the
//     quota's script once the processes run on it: their EVALSHA met
//     NOSCRIPT, and the fetch sent it again by EVAL.
//
// The cluster is failed back at the end, for the tests that follow.
// (Package fleet's TestClusterFailover does the same for a breaker.)
func TestClusterFailover(t *testing.T) {
	c := redistest.NewCluster(t)
	before := c.Settled()
	require.Len(t, before, 3, "three masters")
	t.Cleanup(func() { c.Restore(before) }) // last, once the processes have closed
	ns := namespace(t)
	name := redistest.Spread(t, before, "partner", func(name string) int { return quotaSlot(c, ns, name) })[0] // on the first master
	master, replica := before[0].Master, before[0].Replicas[0]
	ctx := context.Background()

	ps := startClusterProcs(t, c.Addrs, 5)
	const rate, burst = 1000.0, 200
	start := time.Now() // before the first lease
	qs := make([]*Quota, len(ps))
	logs := make([]*quotaLog, len(ps))
	for i, p := range ps {
		qs[i], logs[i] = startQuota(t, p, Config{Namespace: ns, Name: name, Rate: rate, Burst: burst, Processes: len(ps)})
	}
	lease := float64(qs[0].Lease())
	// Redis does not replicate scripts, but a replica that was a master
	// before (an earlier failover, failed back) keeps what it loaded then.
	require.NoError(t, c.Nodes[replica].ScriptFlush(ctx).Err())
	has, err := c.Nodes[replica].ScriptExists(ctx, take.Hash()).Result()
	require.NoError(t, err)
	require.Equal(t, []bool{false}, has, "the replica has not the quota's script")

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

	// The failover.
	_, took := c.Promote(replica, master, quotaSlot(c, ns, name))

	// The quotas come back, and the promoted replica has their script.
	for i, q := range qs {
		from := q.fetches.Load()
		require.Eventually(t, func() bool {
			errs, afters := logs[i].recovered()
			return q.fetches.Load() > from && !q.Degraded() && len(afters) == len(errs)
		}, wait, tick, "process %s's quota fetches again", ps[i].id)
	}
	require.Eventually(t, func() bool {
		return c.Scripted(replica, take.Hash())
	}, wait, tick, "the fetches sent their script again by EVAL")

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
	var outages []time.Duration
	errs := map[string]int{} // the errors of the outages, and how many began with each
	for _, l := range logs {
		es, afters := l.recovered()
		outages = append(outages, afters...)
		for _, e := range es {
			errs[e]++
		}
	}
	t.Logf("promoted %v after CLUSTER FAILOVER; the quotas' outages %v, with %v; "+
		"admitted %d in %.3fs, bound %.0f (%.0f of it the local shares); closest to the bound: %d at %.3fs, bound %.0f; %d samples",
		took, outages, errs, end.n, end.at.Sub(start).Seconds(), endBound, shares,
		worst.n, worst.at.Sub(start).Seconds(), worstBound, len(*samples))
	assert.LessOrEqual(t, float64(worst.n), worstBound, "at %v: Rate × t + Burst + processes × Lease + the local shares",
		worst.at.Sub(start))
	assert.LessOrEqual(t, float64(end.n), endBound, "at the end")
}

// spend calls Allow from workers goroutines until stop is closed, counting
// the calls admitted in n and yielding after each refusal.
func spend(wg *sync.WaitGroup, q *Quota, workers int, n *atomic.Int64, stop <-chan struct{}) {
	for range workers {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, ok := q.Allow(); ok {
					n.Add(1)
				} else {
					runtime.Gosched()
				}
			}
		})
	}
}

// sample is the calls admitted by a moment.
type sample struct {
	at time.Time
	n  int64
}

// sampler records, every 10 ms until stop is closed, the sum of counts,
// then the time: the calls admitted by then are at least the sum.
func sampler(wg *sync.WaitGroup, counts []atomic.Int64, stop <-chan struct{}) *[]sample {
	var samples []sample
	wg.Go(func() {
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			var n int64
			for i := range counts {
				n += counts[i].Load()
			}
			samples = append(samples, sample{at: time.Now(), n: n})
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	})
	return &samples
}

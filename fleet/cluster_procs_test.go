package fleet

import (
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline/fleet/internal/redistest"
	"github.com/resilience-go/pipeline/policy/breaker"
)

// clusterRefresh is the Refresh of the processes on the cluster: a round
// pipelines to every master the process's breakers live on, and gets half.
const clusterRefresh = 100 * time.Millisecond

// breakerSlot is the slot of a breaker's keys on the cluster c.
func breakerSlot(c *redistest.Cluster, ns, name string) int {
	k := keysOf(ns, name)
	return c.Slot(k.seen, k.open, k.following, k.control)
}

// clusterProc is one process of a service on the cluster: its own cluster
// client, and a fleet watching one breaker per name, each on a fake clock
// of its own.
type clusterProc struct {
	id     string
	rdb    *redis.ClusterClient
	f      *Fleet
	bs     map[string]*breaker.Breaker
	clocks map[string]*clockwork.FakeClock // the breakers', by name
	events *recorder
}

// startClusterProc starts a process watching a breaker of each name, and
// closes it all at the end of the test.
func startClusterProc(t *testing.T, addrs []string, ns, id string, names ...string) *clusterProc {
	t.Helper()
	p := &clusterProc{id: id, rdb: redistest.ClusterClient(t, addrs), bs: map[string]*breaker.Breaker{},
		clocks: map[string]*clockwork.FakeClock{}, events: &recorder{}}
	var err error
	p.f, err = New(Config{Redis: p.rdb, Namespace: ns, Process: id, Refresh: clusterRefresh, OnEvent: p.events.hook})
	require.NoError(t, err)
	t.Cleanup(p.f.Close) // before the client's Close, registered first
	for _, name := range names {
		p.clocks[name] = clockwork.NewFakeClock()
		b, err := breaker.New(breaker.Config{Name: name, ConsecutiveFailures: 3, BreakJitter: breaker.JitterNone,
			Clock: p.clocks[name]})
		require.NoError(t, err)
		stop, err := p.f.Watch(b)
		require.NoError(t, err)
		t.Cleanup(stop)
		p.bs[name] = b
	}
	return p
}

// startClusterProcs starts n processes, "a", "b" and so on, watching the
// breakers names.
func startClusterProcs(t *testing.T, addrs []string, ns string, n int, names ...string) []*clusterProc {
	t.Helper()
	ps := make([]*clusterProc, n)
	for i := range ps {
		ps[i] = startClusterProc(t, addrs, ns, string(rune('a'+i)), names...)
	}
	return ps
}

// trip opens the process's breaker name on its own evidence, and refuses
// reports whether it refuses an attempt now (as proc's methods do).
func (p *clusterProc) trip(t *testing.T, name string) { (&proc{b: p.bs[name]}).trip(t) }
func (p *clusterProc) refuses(name string) bool       { return (&proc{b: p.bs[name]}).refuses() }

// recover brings the breaker name, open on its own evidence, back to Closed:
// its break passes and two probes succeed.
func (p *clusterProc) recover(t *testing.T, name string) {
	t.Helper()
	p.clocks[name].Advance(15 * time.Second)
	for range 2 {
		require.False(t, p.refuses(name), "process %s probes %s", p.id, name)
	}
	require.Equal(t, breaker.Closed, p.bs[name].State())
}

// recoverAll waits, once the quorum of the breaker name has recovered,
// until its open reports are gone from node and every process's breaker is
// closed: a break the fleet forced is no longer renewed, passes on its
// clock, and a probe succeeds. (A process of the quorum may have been
// forced too: a round that read its report open just before it closed, the
// quorum's other reports not yet closed, forced it as it would any closed
// breaker, as fleet.md says of a process that closes while the fleet is
// still open.)
func recoverAll(t *testing.T, node *redis.Client, ns, name string, ps []*clusterProc) {
	t.Helper()
	clusterReports(t, node, ns, name, reportOpen, 0)
	for _, p := range ps {
		require.Eventually(t, func() bool {
			p.clocks[name].Advance(2 * clusterRefresh)
			p.refuses(name)
			return p.bs[name].State() == breaker.Closed
		}, wait, tick, "process %s recovers %s", p.id, name)
	}
	clusterReports(t, node, ns, name, reportClosed, len(ps))
}

// clusterRounds waits until every process's loop has run n more rounds.
func clusterRounds(t *testing.T, n int64, ps ...*clusterProc) {
	t.Helper()
	fs := make([]*proc, len(ps))
	for i, p := range ps {
		fs[i] = &proc{f: p.f}
	}
	rounds(t, n, fs...)
}

// outages returns the errors the process's fleet raised Degraded with,
// one an outage, and how long each outage it has come back from lasted, as
// Recovered measured it.
func (p *clusterProc) outages() (errs []string, afters []time.Duration) {
	p.events.mu.Lock()
	defer p.events.mu.Unlock()
	for _, e := range p.events.events {
		switch e := e.(type) {
		case Degraded:
			errs = append(errs, e.Err.Error())
		case Recovered:
			afters = append(afters, e.After)
		}
	}
	return errs, afters
}

// clusterReports waits until the breaker name's sets, read on node (the
// master its hash tag puts them on), hold want reports of state.
func clusterReports(t *testing.T, node *redis.Client, ns, name string, state byte, want int) {
	t.Helper()
	require.Eventually(t, func() bool {
		n, err := members(node, keysOf(ns, name), state)
		return err == nil && n == want
	}, wait, tick, "%d reports %q of %s on %s", want, state, name, node.Options().Addr)
}

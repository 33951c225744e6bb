package redistest

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// clusterWait bounds the polls of a cluster's own state: a failover on a
// busy machine takes seconds, and a manual failover Redis gives up after
// 5 s is asked for again (see Cluster.Failover). Never a timing assertion.
const clusterWait = 90 * time.Second

// ClusterAddrs returns the addresses of every node of the Redis Cluster the
// tests share, masters and replicas, or skips.
func ClusterAddrs(t testing.TB) []string {
	t.Helper()
	addrs := os.Getenv("PIPELINE_REDIS_CLUSTER_ADDRS")
	if addrs == "" {
		t.Skip("PIPELINE_REDIS_CLUSTER_ADDRS is not set: the cluster tests need a Redis Cluster (scripts/test.sh starts one)")
	}
	return strings.Split(addrs, ",")
}

// ClusterClient is a client of the cluster as the docs build one, closed at
// the end of the test.
func ClusterClient(t testing.TB, addrs []string) *redis.ClusterClient {
	t.Helper()
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = rdb.Close() })
	return rdb
}

// Cluster is the test's view of the Redis Cluster, through a client of its
// own to each node, to read how the nodes see the cluster and to fail a
// master over. The tests take the cluster as they find it: which node is
// a master is read, never assumed.
type Cluster struct {
	t     *testing.T
	Addrs []string                 // every node's, as ClusterAddrs
	Nodes map[string]*redis.Client // by address
	any   *redis.Client            // one of them, for CLUSTER KEYSLOT
}

// NewCluster returns the test's view of the cluster, or skips. It first
// takes the cluster for the test, until the test's end: the cluster tests
// of package fleet and of package fleet/quota, which go test runs in two
// processes at once, fail masters over and count what each master holds,
// so they must not run at the same time.
func NewCluster(t *testing.T) *Cluster {
	t.Helper()
	addrs := ClusterAddrs(t)
	lock(t, addrs)
	c := &Cluster{t: t, Addrs: addrs, Nodes: make(map[string]*redis.Client)}
	for _, addr := range addrs {
		c.Nodes[addr] = redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true, MaxRetries: -1})
		c.any = c.Nodes[addr]
	}
	t.Cleanup(func() {
		for _, n := range c.Nodes {
			_ = n.Close()
		}
	})
	return c
}

// Shard is a master and its replicas, by address, with the slots it serves.
type Shard struct {
	Master   string
	Replicas []string
	Slots    []redis.SlotRange
}

// Topology is the cluster as every node agrees it is: its shards, ordered
// by their first slot.
type Topology []Shard

// ShardOf returns the shard that serves slot.
func (tp Topology) ShardOf(slot int) Shard {
	for _, s := range tp {
		for _, r := range s.Slots {
			if r.Start <= int64(slot) && int64(slot) <= r.End {
				return s
			}
		}
	}
	panic(fmt.Sprintf("no shard serves slot %d", slot))
}

// Masters returns the masters of the shards, in order.
func (tp Topology) Masters() []string {
	ms := make([]string, len(tp))
	for i, s := range tp {
		ms[i] = s.Master
	}
	return ms
}

// shardsOf is the topology of CLUSTER SHARDS as one node answers it, or an
// error if a node is not online.
func shardsOf(shards []redis.ClusterShard) (Topology, error) {
	var tp Topology
	for _, sh := range shards {
		s := Shard{Slots: sh.Slots}
		for _, n := range sh.Nodes {
			addr := n.IP + ":" + strconv.FormatInt(n.Port, 10)
			switch {
			case n.Health != "online":
				return nil, fmt.Errorf("node %s is %s", addr, n.Health)
			case n.Role == "master":
				s.Master = addr
			default:
				s.Replicas = append(s.Replicas, addr)
			}
		}
		if len(s.Slots) == 0 { // a master without slots
			continue
		}
		slices.Sort(s.Replicas)
		slices.SortFunc(s.Slots, func(a, b redis.SlotRange) int { return int(a.Start - b.Start) })
		tp = append(tp, s)
	}
	slices.SortFunc(tp, func(a, b Shard) int { return int(a.Slots[0].Start - b.Slots[0].Start) })
	return tp, nil
}

// topology reads the cluster from every node, and returns it if it is
// settled: every node says the cluster is ok with all 16384 slots served,
// sees every node online and agrees with the others on the shards, and
// every master has a replica whose link to it is up.
func (c *Cluster) topology() (Topology, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	var agreed Topology
	first := ""
	for addr, n := range c.Nodes {
		info, err := n.ClusterInfo(ctx).Result()
		if err != nil {
			return nil, err
		}
		if !strings.Contains(info, "cluster_state:ok") || !strings.Contains(info, "cluster_slots_ok:16384") {
			return nil, fmt.Errorf("node %s: the cluster is not ok", addr)
		}
		shards, err := n.ClusterShards(ctx).Result()
		if err != nil {
			return nil, err
		}
		tp, err := shardsOf(shards)
		if err != nil {
			return nil, fmt.Errorf("as node %s sees it: %w", addr, err)
		}
		if first == "" {
			agreed, first = tp, addr
		} else if fmt.Sprint(tp) != fmt.Sprint(agreed) {
			return nil, fmt.Errorf("node %s sees %v, node %s %v", addr, tp, first, agreed)
		}
	}
	for _, s := range agreed {
		if s.Master == "" || len(s.Replicas) == 0 {
			return nil, fmt.Errorf("shard %v has no master or no replica", s)
		}
		for _, r := range s.Replicas {
			info, err := c.Nodes[r].Info(ctx, "replication").Result()
			if err != nil {
				return nil, err
			}
			if !strings.Contains(info, "master_link_status:up") {
				return nil, fmt.Errorf("replica %s is not linked to its master", r)
			}
		}
	}
	return agreed, nil
}

// Settled waits until the cluster is settled and returns it.
func (c *Cluster) Settled() Topology {
	c.t.Helper()
	var tp Topology
	var last error
	ok := poll(func() bool {
		tp, last = c.topology()
		return last == nil
	}, clusterWait)
	require.True(c.t, ok, "the cluster did not settle within %v: %v", clusterWait, last)
	return tp
}

// poll calls cond every 50 ms until it holds or within has passed, and
// reports which. Unlike require.Eventually it calls cond on the caller's
// goroutine, so that cond may keep what it read for the caller.
func poll(cond func() bool, within time.Duration) bool {
	deadline := time.Now().Add(within)
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		<-t.C
	}
	return true
}

// Slot returns the cluster's hash slot (CLUSTER KEYSLOT) of keys, all of
// which must share it.
func (c *Cluster) Slot(keys ...string) int {
	c.t.Helper()
	slot := -1
	for _, k := range keys {
		n, err := c.any.ClusterKeySlot(context.Background(), k).Result()
		require.NoError(c.t, err)
		if slot >= 0 {
			require.Equal(c.t, slot, int(n), "key %s shares the slot of %s", k, keys[0])
		}
		slot = int(n)
	}
	return slot
}

// Spread returns, for each shard of tp in order, the first name prefix-i
// whose keys slotOf puts on a slot of that shard: names on every master.
func Spread(t *testing.T, tp Topology, prefix string, slotOf func(name string) int) []string {
	t.Helper()
	names := make([]string, len(tp))
	left := len(tp)
	for i := 0; left > 0; i++ {
		require.Less(t, i, 1000, "no name of %s-i on every master", prefix)
		name := fmt.Sprintf("%s-%d", prefix, i)
		master := tp.ShardOf(slotOf(name)).Master
		for j, s := range tp {
			if s.Master == master && names[j] == "" {
				names[j] = name
				left--
			}
		}
	}
	return names
}

// Failover promotes replica (CLUSTER FAILOVER, sent to it) and waits until
// the cluster has settled with it a master. Redis drops a manual failover
// that has not completed within 5 s, as one may not on a busy machine; it
// is asked for again every 10 s until clusterWait has passed.
func (c *Cluster) Failover(replica string) Topology {
	c.t.Helper()
	var tp Topology
	var asked time.Time
	var last error
	ok := poll(func() bool {
		if tp, last = c.topology(); last == nil && slices.Contains(tp.Masters(), replica) {
			return true
		}
		if time.Since(asked) > 10*time.Second {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			if err := c.Nodes[replica].ClusterFailover(ctx).Err(); err != nil {
				last = err
				return false
			}
			asked = time.Now()
		}
		return false
	}, clusterWait)
	require.True(c.t, ok, "replica %s not promoted within %v: %v", replica, clusterWait, last)
	return tp
}

// Promote fails master's slot over to replica, its replica (Failover), and
// checks that the two swapped: replica serves slot and master replicates
// it. It returns the cluster's topology after, and how long the failover
// took.
func (c *Cluster) Promote(replica, master string, slot int) (Topology, time.Duration) {
	c.t.Helper()
	asked := time.Now()
	after := c.Failover(replica)
	took := time.Since(asked)
	require.Equal(c.t, replica, after.ShardOf(slot).Master, "the replica serves slot %d", slot)
	require.Contains(c.t, after.ShardOf(slot).Replicas, master, "its master is its replica now")
	require.Equal(c.t, "master", c.Role(replica))
	require.Equal(c.t, "slave", c.Role(master))
	return after, took
}

// Restore fails the cluster back to the masters of tp, for the tests that
// follow, and waits until it has settled so.
func (c *Cluster) Restore(tp Topology) {
	c.t.Helper()
	for _, m := range tp.Masters() {
		if now := c.Settled(); !slices.Contains(now.Masters(), m) {
			c.Failover(m)
		}
	}
}

// Role returns the role node gives itself (ROLE): "master" or "slave".
func (c *Cluster) Role(node string) string {
	c.t.Helper()
	r, err := c.Nodes[node].Do(context.Background(), "ROLE").Slice()
	require.NoError(c.t, err)
	return fmt.Sprint(r[0])
}

// Scripted reports whether node has the scripts shas in its cache (false
// if it cannot tell).
func (c *Cluster) Scripted(node string, shas ...string) bool {
	ok, err := c.Nodes[node].ScriptExists(context.Background(), shas...).Result()
	return err == nil && !slices.Contains(ok, false)
}

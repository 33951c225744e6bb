package fleet

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
// 5 s is asked for again (see cluster.failover). Never a timing assertion.
const clusterWait = 90 * time.Second

// clusterRefresh is the Refresh of the processes on the cluster: a round
// pipelines to every master the process's breakers live on, and gets half.
const clusterRefresh = 100 * time.Millisecond

// clusterAddrs returns the addresses of every node of the Redis Cluster the
// tests share, masters and replicas, or skips.
func clusterAddrs(t *testing.T) []string {
	t.Helper()
	addrs := os.Getenv("PIPELINE_REDIS_CLUSTER_ADDRS")
	if addrs == "" {
		t.Skip("PIPELINE_REDIS_CLUSTER_ADDRS is not set: the cluster tests need a Redis Cluster (scripts/test.sh starts one)")
	}
	return strings.Split(addrs, ",")
}

// clusterClient is a client of the cluster as the docs build one, closed at
// the end of the test.
func clusterClient(t *testing.T, addrs []string) *redis.ClusterClient {
	t.Helper()
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = rdb.Close() })
	return rdb
}

// cluster is the test's view of the Redis Cluster, through a client of its
// own to each node, to read how the nodes see the cluster and to fail a
// master over. The tests take the cluster as they find it: which node is
// a master is read, never assumed.
type cluster struct {
	t     *testing.T
	nodes map[string]*redis.Client // by address
	any   *redis.Client            // one of them, for CLUSTER KEYSLOT
}

func newCluster(t *testing.T) *cluster {
	t.Helper()
	c := &cluster{t: t, nodes: make(map[string]*redis.Client)}
	for _, addr := range clusterAddrs(t) {
		c.nodes[addr] = redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true, MaxRetries: -1})
		c.any = c.nodes[addr]
	}
	t.Cleanup(func() {
		for _, n := range c.nodes {
			_ = n.Close()
		}
	})
	return c
}

// shard is a master and its replicas, by address, with the slots it serves.
type shard struct {
	master   string
	replicas []string
	slots    []redis.SlotRange
}

// topology is the cluster as every node agrees it is: its shards, ordered
// by their first slot.
type topology []shard

// shardOf returns the shard that serves slot.
func (tp topology) shardOf(slot int) shard {
	for _, s := range tp {
		for _, r := range s.slots {
			if r.Start <= int64(slot) && int64(slot) <= r.End {
				return s
			}
		}
	}
	panic(fmt.Sprintf("no shard serves slot %d", slot))
}

func (tp topology) masters() []string {
	ms := make([]string, len(tp))
	for i, s := range tp {
		ms[i] = s.master
	}
	return ms
}

// shardsOf is the topology of CLUSTER SHARDS as one node answers it, or an
// error if a node is not online.
func shardsOf(shards []redis.ClusterShard) (topology, error) {
	var tp topology
	for _, sh := range shards {
		s := shard{slots: sh.Slots}
		for _, n := range sh.Nodes {
			addr := n.IP + ":" + strconv.FormatInt(n.Port, 10)
			switch {
			case n.Health != "online":
				return nil, fmt.Errorf("node %s is %s", addr, n.Health)
			case n.Role == "master":
				s.master = addr
			default:
				s.replicas = append(s.replicas, addr)
			}
		}
		if len(s.slots) == 0 { // a master without slots
			continue
		}
		slices.Sort(s.replicas)
		slices.SortFunc(s.slots, func(a, b redis.SlotRange) int { return int(a.Start - b.Start) })
		tp = append(tp, s)
	}
	slices.SortFunc(tp, func(a, b shard) int { return int(a.slots[0].Start - b.slots[0].Start) })
	return tp, nil
}

// topology reads the cluster from every node, and returns it if it is
// settled: every node says the cluster is ok with all 16384 slots served,
// sees every node online and agrees with the others on the shards, and
// every master has a replica whose link to it is up.
func (c *cluster) topology() (topology, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	var agreed topology
	first := ""
	for addr, n := range c.nodes {
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
		if s.master == "" || len(s.replicas) == 0 {
			return nil, fmt.Errorf("shard %v has no master or no replica", s)
		}
		for _, r := range s.replicas {
			info, err := c.nodes[r].Info(ctx, "replication").Result()
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

// settled waits until the cluster is settled and returns it.
func (c *cluster) settled() topology {
	c.t.Helper()
	var tp topology
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

// slot returns the cluster's hash slot (CLUSTER KEYSLOT) of keys, all of
// which must share it.
func (c *cluster) slot(keys ...string) int {
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

// breakerSlot and quotaSlot are the slots of a breaker's and a quota's keys.
func (c *cluster) breakerSlot(ns, name string) int {
	k := keysOf(ns, name)
	return c.slot(k.seen, k.open, k.following, k.control)
}

func (c *cluster) quotaSlot(ns, name string) int {
	k := quotaKeysOf(ns, name)
	return c.slot(k.tat, k.seen)
}

// failover promotes replica (CLUSTER FAILOVER, sent to it) and waits until
// the cluster has settled with it a master. Redis drops a manual failover
// that has not completed within 5 s, as one may not on a busy machine; it
// is asked for again every 10 s until clusterWait has passed.
func (c *cluster) failover(replica string) topology {
	c.t.Helper()
	var tp topology
	var asked time.Time
	var last error
	ok := poll(func() bool {
		if tp, last = c.topology(); last == nil && slices.Contains(tp.masters(), replica) {
			return true
		}
		if time.Since(asked) > 10*time.Second {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			if err := c.nodes[replica].ClusterFailover(ctx).Err(); err != nil {
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

// restore fails the cluster back to the masters of tp, for the tests that
// follow, and waits until it has settled so.
func (c *cluster) restore(tp topology) {
	c.t.Helper()
	for _, m := range tp.masters() {
		if now := c.settled(); !slices.Contains(now.masters(), m) {
			c.failover(m)
		}
	}
}

// role returns the role node gives itself (ROLE): "master" or "slave".
func (c *cluster) role(node string) string {
	c.t.Helper()
	r, err := c.nodes[node].Do(context.Background(), "ROLE").Slice()
	require.NoError(c.t, err)
	return fmt.Sprint(r[0])
}

// scripted reports whether node has the scripts shas in its cache (false
// if it cannot tell).
func (c *cluster) scripted(node string, shas ...string) bool {
	ok, err := c.nodes[node].ScriptExists(context.Background(), shas...).Result()
	return err == nil && !slices.Contains(ok, false)
}

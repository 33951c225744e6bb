package quota

import (
	"context"
	"errors"
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
	"github.com/resilience-go/pipeline/outcome"
)

// quotaEvents keeps a quota's events.
type quotaEvents struct {
	mu     sync.Mutex
	events []pipeline.Event
}

func (r *quotaEvents) hook(_ context.Context, src pipeline.Source, e pipeline.Event) {
	if src.Stage != stageKind || src.Name != "partner" {
		panic("quota event from source " + src.Stage + " " + src.Name)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

func (r *quotaEvents) count(name string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, e := range r.events {
		if e.Name() == name {
			n++
		}
	}
	return n
}

// client is one process of a fleet sharing a quota: its own Redis client
// and Quota, both closed at the end of the test. The client gives up on
// Redis after half the quota's Timeout, and no sooner than 50 ms.
type client struct {
	rdb    *redis.Client
	q      *Quota
	events *quotaEvents
}

func newClient(t testing.TB, addr string, cfg Config) *client {
	t.Helper()
	c := &client{events: &quotaEvents{}}
	c.rdb = redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, ContextTimeoutEnabled: true})
	cfg.Redis, cfg.Name, cfg.OnEvent = c.rdb, "partner", c.events.hook
	q, err := New(cfg)
	require.NoError(t, err)
	c.q = q
	t.Cleanup(func() {
		c.q.Close()
		_ = c.rdb.Close()
	})
	return c
}

// hammer calls Allow from workers goroutines until d has passed, yielding
// after each refusal, and returns the calls admitted and the time
// from its start to its last worker's end.
func hammer(q *Quota, workers int, d time.Duration) (admitted int64, took time.Duration) {
	var n atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	end := start.Add(d)
	for range workers {
		wg.Go(func() {
			for time.Now().Before(end) {
				if _, ok := q.Allow(); ok {
					n.Add(1)
				} else {
					runtime.Gosched()
				}
			}
		})
	}
	wg.Wait()
	return n.Load(), time.Since(start)
}

// Eight processes, each with its own Redis client and Quota, spend a shared
// quota of 2,000 calls a second as fast as they can for ten seconds of real
// time (the proof issue 18 asks for): the fleet admits no more than the
// stated bound, Rate × t + Burst + processes × Lease, and at least 80% of
// Rate × t, so that the test fails as much on a quota wasted as on one
// exceeded. Both bounds are taken on the elapsed time measured, from before
// the first lease to after the last call, so that a slow machine only moves
// them; fetches may take a second, so that a loaded machine does not turn
// the test into one of an outage, and the burst holds 200 ms of the rate, so
// that a test descheduled for a while does not waste the tokens earned
// meanwhile (with 50 ms, one run on a machine at a load average of 7 used
// only 81.8% of the rate).
func TestQuotaFleetHammer(t *testing.T) {
	if testing.Short() {
		t.Skip("hammers for ten seconds of real time")
	}
	addr := redisAddr(t)
	ns := namespace(t)
	const processes, rate, burst = 8, 2000.0, 400
	const d = 10 * time.Second
	start := time.Now() // the first lease is taken by New
	cs := make([]*client, processes)
	for i := range cs {
		cs[i] = newClient(t, addr, Config{Namespace: ns, Rate: rate, Burst: burst, Processes: processes,
			Timeout: time.Second})
	}
	lease := int64(cs[0].q.Lease())
	require.Equal(t, int64(20), lease)

	counts := make([]int64, processes)
	var wg sync.WaitGroup
	for i, c := range cs {
		wg.Go(func() { counts[i], _ = hammer(c.q, 4, d) })
	}
	wg.Wait()
	elapsed := time.Since(start).Seconds()

	var total int64
	for _, n := range counts {
		total += n
	}
	bound := rate*elapsed + burst + processes*float64(lease)
	t.Logf("admitted %d in %.3fs: %.0f/s, %.1f%% of Rate × t; bound %.0f; per process %d to %d",
		total, elapsed, float64(total)/elapsed, 100*float64(total)/(rate*elapsed), bound,
		slices.Min(counts), slices.Max(counts))
	assert.LessOrEqual(t, float64(total), bound, "Rate × t + Burst + processes × Lease")
	assert.GreaterOrEqual(t, float64(total), 0.8*rate*elapsed, "the quota is used")
	for _, c := range cs {
		assert.False(t, c.q.Degraded())
		assert.Zero(t, c.events.count("fleet.degraded"))
	}
}

// The stage refuses with a quota StopError and a self-imposed Throttled
// verdict carrying the hint, and runs nothing.
func TestQuotaGuard(t *testing.T) {
	c := newClient(t, redisAddr(t), Config{Namespace: namespace(t), Rate: 1, Burst: 1, Processes: 1})
	g := Guard[string](c.q)
	assert.Equal(t, pipeline.StageInfo{Kind: "quota", Name: "partner"}, g.Stage())
	var _ pipeline.Policy[string] = g

	pl := pipeline.New(g)
	ran := 0
	fn := func(context.Context) (string, error) { ran++; return "ok", nil }
	v, err := pl.Execute(context.Background(), fn)
	require.NoError(t, err)
	assert.Equal(t, "ok", v)

	_, err = pl.Execute(context.Background(), fn)
	stop, ok := errors.AsType[*pipeline.StopError](err)
	require.True(t, ok, "%v", err)
	assert.Equal(t, "quota", stop.Stage)
	assert.Equal(t, "partner", stop.Name)
	assert.Equal(t, pipeline.RateLimited, stop.Reason)
	assert.ErrorIs(t, err, pipeline.RateLimited)
	assert.Greater(t, stop.RetryAfter, 900*time.Millisecond)
	assert.LessOrEqual(t, stop.RetryAfter, time.Second)
	assert.Equal(t, 1, ran)

	// The verdict, as a stage outside sees it.
	var verdict outcome.Verdict
	outer := pipeline.PolicyFunc[string](func(ctx context.Context, next pipeline.Next[string]) pipeline.Result[string] {
		res := next.Run(ctx)
		verdict = res.Verdict
		return res
	})
	_, err = pipeline.New(outer, g).Execute(context.Background(), fn)
	require.Error(t, err)
	assert.Equal(t, outcome.Verdict{Kind: outcome.Throttled, SelfImposed: true}.WithRetryAfter(stop.RetryAfter), verdict)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = pl.Execute(ctx, fn)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, 1, ran)
}

// With Redis slow, then gone, nothing waits on it: calls are decided from
// the local share (Rate/Processes), Degraded is raised once; once Redis is
// back, Recovered, and the fleet's quota applies again.
func TestQuotaRedisDown(t *testing.T) {
	srv := startServer(t)
	ns := namespace(t)
	const rate, burst, processes = 400.0, 20, 2
	cfg := Config{Namespace: ns, Rate: rate, Burst: burst, Processes: processes, Timeout: 100 * time.Millisecond}
	a := newClient(t, srv.Addr(), cfg)
	b := newClient(t, srv.Addr(), cfg)
	lease := float64(a.q.Lease())
	n, _ := hammer(a.q, 2, 200*time.Millisecond)
	require.Positive(t, n)

	// Slow: Redis stops answering. Fetches time out; no call waits for one.
	admin := redis.NewClient(&redis.Options{Addr: srv.Addr(), ContextTimeoutEnabled: true})
	defer admin.Close()
	require.NoError(t, admin.Do(context.Background(), "CLIENT", "PAUSE", "500", "ALL").Err())
	var calls, admitted int
	fetches := a.q.fetches.Load()
	require.Eventually(t, func() bool { // calls go on while the fetches time out
		calls++
		if _, ok := a.q.Allow(); ok {
			admitted++
		}
		return a.q.Degraded() && admitted >= 10
	}, wait, 100*time.Microsecond)
	assert.GreaterOrEqual(t, admitted, 10)
	// A call that waited for a fetch would take a Timeout of the paused
	// Redis: there would be about as many calls as fetches.
	fetched := a.q.fetches.Load() - fetches
	assert.GreaterOrEqual(t, calls, 10*int(fetched), "%d calls, %d fetches: a call never waits for a fetch", calls, fetched)
	assert.Equal(t, 1, a.events.count("fleet.degraded"))

	// Gone.
	srv.Stop()
	n, took := hammer(b.q, 2, 300*time.Millisecond)
	assert.True(t, b.q.Degraded())
	assert.Equal(t, 1, b.events.count("fleet.degraded"), "once per outage")
	assert.Positive(t, n, "calls are decided from the local share")
	assert.LessOrEqual(t, float64(n), rate/processes*took.Seconds()+burst/processes+lease,
		"the local share: Rate/Processes × t + Burst/Processes + the lease held")
	n, took = hammer(a.q, 2, 300*time.Millisecond)
	assert.Positive(t, n)
	assert.LessOrEqual(t, float64(n), rate/processes*took.Seconds()+burst/processes+lease)
	assert.Equal(t, 1, a.events.count("fleet.degraded"), "once per outage")

	// Back (empty, as a restart without persistence leaves it).
	srv.Start()
	for _, c := range []*client{a, b} {
		require.Eventually(t, func() bool {
			c.q.Allow() // the lease is low: each call asks for a fetch
			return c.events.count("fleet.recovered") == 1
		}, wait, tick)
		assert.False(t, c.q.Degraded())
	}
	// One process alone now gets the fleet's rate, twice its local share,
	// and no more than the bound.
	n, took = hammer(a.q, 2, time.Second)
	t.Logf("after recovery: %d in %v", n, took)
	assert.LessOrEqual(t, float64(n), rate*took.Seconds()+burst+processes*lease)
	assert.Greater(t, float64(n), rate/processes*took.Seconds()+burst/processes+lease, "more than the local share")
}

// A quota whose Redis never answered starts degraded, on its local share,
// and Close returns.
func TestQuotaStartsDegraded(t *testing.T) {
	c := newClient(t, "127.0.0.1:1", Config{Namespace: namespace(t), Rate: 10, Burst: 4, Processes: 2, Timeout: 20 * time.Millisecond})
	assert.True(t, c.q.Degraded())
	assert.Equal(t, 1, c.events.count("fleet.degraded"))
	for range 2 {
		_, ok := c.q.Allow()
		assert.True(t, ok, "the local share's burst: Burst/Processes")
	}
	wait, ok := c.q.Allow()
	assert.False(t, ok)
	assert.Positive(t, wait)
	c.q.Close()
	c.q.Close()
}

// A process holds at most a lease: New fetches one, the first half is
// spent without a fetch, and spending past half tops it up again.
func TestQuotaLeaseTopsUp(t *testing.T) {
	c := newClient(t, redisAddr(t), Config{Namespace: namespace(t), Rate: 1000, Burst: 1000, Lease: 10, Processes: 1})
	require.Equal(t, int64(10), c.q.tokens.Load())
	require.Equal(t, int64(1), c.q.fetches.Load())
	for range 4 {
		_, ok := c.q.Allow()
		require.True(t, ok)
	}
	// Above half: no fetch is asked for.
	assert.Empty(t, c.q.kick, "no fetch requested")
	assert.Equal(t, int64(1), c.q.fetches.Load())
	assert.Equal(t, int64(6), c.q.tokens.Load())
	_, ok := c.q.Allow()
	require.True(t, ok)
	require.Eventually(t, func() bool { return c.q.tokens.Load() == 10 }, wait, tick, "topped up to the lease")
	assert.Equal(t, int64(2), c.q.fetches.Load())
}

// Close gives the unused lease back to Redis, where the other processes
// find it; a Redis that lost the key (a full bucket) gets nothing more. The
// quota earns one token in 1,000 s, so that no token is earned during the
// test and every count is exact.
func TestQuotaCloseGivesTheLeaseBack(t *testing.T) {
	addr := redisAddr(t)
	ns := namespace(t)
	cfg := Config{Namespace: ns, Rate: 0.001, Burst: 10, Lease: 5, Processes: 3}
	a := newClient(t, addr, cfg)
	b := newClient(t, addr, cfg)
	require.Equal(t, int64(5), a.q.tokens.Load())
	require.Equal(t, int64(5), b.q.tokens.Load(), "the bucket is empty now")
	_, ok := a.q.Allow()
	require.True(t, ok)
	require.Equal(t, int64(1), a.q.fetches.Load(), "4 left is above half the lease: no fetch")

	a.q.Close()
	assert.Equal(t, int64(4), a.q.given.Load(), "the 4 tokens a did not spend")
	_, ok = a.q.Allow()
	assert.False(t, ok, "a closed quota admits nothing")
	c := newClient(t, addr, cfg)
	assert.Equal(t, int64(4), c.q.tokens.Load(), "a new process finds the 4 a gave back")

	b.q.Close()
	c.q.Close()
	assert.Equal(t, int64(5), b.q.given.Load())
	assert.Equal(t, int64(4), c.q.given.Load())
	raw := takeRequest{interval: 1e9, burst: 10, want: 20, process: "raw", ttl: time.Second}
	granted, _, _, err := grant(context.Background(), b.rdb, keysOf(ns, "partner"), raw)
	require.NoError(t, err)
	assert.Equal(t, int64(9), granted, "every token not spent is back in Redis")

	// Redis lost the key: the bucket reads full, and a lease given back to
	// it is dropped rather than let it hold more than its burst.
	cfg.Namespace = namespace(t)
	d := newClient(t, addr, cfg)
	require.Equal(t, int64(5), d.q.tokens.Load())
	require.NoError(t, d.rdb.Del(context.Background(), keysOf(cfg.Namespace, "partner").tat).Err())
	d.q.Close()
	assert.Zero(t, d.q.given.Load())
	granted, _, _, err = grant(context.Background(), d.rdb, keysOf(cfg.Namespace, "partner"), raw)
	require.NoError(t, err)
	assert.Equal(t, int64(10), granted, "the burst, not more")
}

// The local share divides the rate by the processes the latest fetch saw,
// not by the configured Processes: two processes of a fleet configured for
// ten each admit half the rate while Redis is gone. A process that closes
// is taken off the count at once.
func TestQuotaLocalShareFromTheProcessesSeen(t *testing.T) {
	srv := startServer(t)
	const rate, burst, processes = 400.0, 20, 10
	cfg := Config{Namespace: namespace(t), Rate: rate, Burst: burst, Processes: processes}
	a := newClient(t, srv.Addr(), cfg)
	b := newClient(t, srv.Addr(), cfg)
	lease := float64(a.q.Lease())
	assert.Equal(t, 2, b.q.Seen())
	require.Eventually(t, func() bool {
		a.q.Allow() // spends the lease, so that a fetches again
		return a.q.Seen() == 2
	}, wait, tick)

	srv.Stop()
	for _, c := range []*client{a, b} {
		n, took := hammer(c.q, 2, 500*time.Millisecond)
		require.True(t, c.q.Degraded())
		t.Logf("local share: %d in %v", n, took)
		assert.LessOrEqual(t, float64(n), rate/2*took.Seconds()+burst/2+lease, "Rate/seen")
		assert.Greater(t, float64(n), rate/processes*took.Seconds()+burst/processes+lease, "more than Rate/Processes")
	}

	srv.Start()
	c := newClient(t, srv.Addr(), cfg)
	for _, p := range []*client{a, b} {
		require.Eventually(t, func() bool {
			p.q.Allow()
			return !p.q.Degraded()
		}, wait, tick)
	}
	require.Eventually(t, func() bool {
		c.q.Allow()
		return c.q.Seen() == 3
	}, wait, tick, "a, b and c")
	b.q.Close()
	require.Eventually(t, func() bool {
		c.q.Allow()
		return c.q.Seen() == 2
	}, wait, tick, "a and c; b is off")
}

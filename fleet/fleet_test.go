package fleet

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/policy/breaker"
)

func fleetOf(t *testing.T, addr, ns string, n int) []*proc {
	ps := make([]*proc, n)
	for i := range ps {
		ps[i] = start(t, addr, ns, string(rune('a'+i)))
	}
	return ps
}

// An outage seen by a quorum (3 of 5) opens every process; once the
// processes that saw it recover, the others recover by themselves.
func TestQuorumOpensEveryone(t *testing.T) {
	addr := redisAddr(t)
	ns := namespace(t)
	ps := fleetOf(t, addr, ns, 5)
	for _, p := range ps[:3] {
		p.trip(t)
	}
	for _, p := range ps[3:] {
		require.Eventually(t, p.refuses, wait, tick, "process %s follows the quorum", p.id)
		assert.Equal(t, breaker.Open, p.b.State())
		assert.Equal(t, 1, p.events.count("fleet.followed"))
	}
	// Followers report following, not open: the quorum is the three.
	reports(t, ps[0].rdb, ns, reportOpen, 3)
	reports(t, ps[0].rdb, ns, reportFollowing, 2)

	// The three probe after their own break, succeed and close.
	for _, p := range ps[:3] {
		p.clock.Advance(15 * time.Second)
		for range 2 {
			require.False(t, p.refuses())
		}
		require.Equal(t, breaker.Closed, p.b.State())
	}
	// The followers' forced break runs out once no quorum renews it, and
	// they close on their own probes.
	for _, p := range ps[3:] {
		require.Eventually(t, func() bool {
			p.clock.Advance(2 * refresh)
			p.refuses()
			return p.b.State() == breaker.Closed
		}, wait, tick, "process %s recovers", p.id)
	}
}

// One process failing alone, or two of five, opens nobody else.
func TestMinorityOpensOnlyItself(t *testing.T) {
	addr := redisAddr(t)
	ns := namespace(t)
	ps := fleetOf(t, addr, ns, 5)
	ps[0].trip(t)
	reports(t, ps[0].rdb, ns, reportOpen, 1)
	rounds(t, 3, ps...)
	for _, p := range ps[1:] {
		assert.Equal(t, breaker.Closed, p.b.State(), "process %s", p.id)
	}
	ps[1].trip(t)
	reports(t, ps[0].rdb, ns, reportOpen, 2)
	rounds(t, 3, ps...)
	for _, p := range ps[2:] {
		assert.Equal(t, breaker.Closed, p.b.State(), "process %s", p.id)
		assert.Zero(t, p.events.count("fleet.followed"))
	}
}

// Two processes: one failing never opens the other, whatever the fraction.
func TestTwoProcesses(t *testing.T) {
	addr := redisAddr(t)
	ns := namespace(t)
	ps := fleetOf(t, addr, ns, 2)
	ps[0].trip(t)
	reports(t, ps[0].rdb, ns, reportOpen, 1)
	rounds(t, 3, ps...)
	assert.Equal(t, breaker.Closed, ps[1].b.State())
}

// The fleet-wide switch isolates every process, wins over a local Reset,
// and its clearing resets every process.
func TestIsolateReachesAll(t *testing.T) {
	addr := redisAddr(t)
	ns := namespace(t)
	ps := fleetOf(t, addr, ns, 3)
	ctx := context.Background()
	require.NoError(t, ps[0].f.Isolate(ctx, dep))
	for _, p := range ps {
		require.Eventually(t, func() bool { return p.b.State() == breaker.Isolated }, wait, tick, "process %s", p.id)
	}
	reports(t, ps[0].rdb, ns, reportFollowing, 3)

	ps[1].b.Reset()
	require.Eventually(t, func() bool { return ps[1].b.State() == breaker.Isolated }, wait, tick)

	require.NoError(t, ps[2].f.Reset(ctx, dep))
	for _, p := range ps {
		require.Eventually(t, func() bool { return p.b.State() == breaker.Closed }, wait, tick, "process %s", p.id)
		assert.GreaterOrEqual(t, p.events.count("fleet.switched"), 2)
	}

	// A process that starts while the switch is set starts isolated.
	require.NoError(t, ps[0].f.Isolate(ctx, dep))
	late := startWith(t, addr, ns, "late", slowRefresh)
	assert.Equal(t, breaker.Isolated, late.b.State())
	require.NoError(t, late.f.Reset(ctx, dep))
}

// A process (re)started during an outage the quorum sees starts open,
// before Watch returns.
func TestRestartStartsOpen(t *testing.T) {
	addr := redisAddr(t)
	ns := namespace(t)
	ps := fleetOf(t, addr, ns, 4)
	for _, p := range ps[:3] {
		p.trip(t)
	}
	reports(t, ps[0].rdb, ns, reportOpen, 3)
	ps[3].close()
	restarted := startWith(t, addr, ns, "d-restarted", slowRefresh)
	assert.Equal(t, breaker.Open, restarted.b.State())
	assert.True(t, restarted.refuses())
	assert.Equal(t, 1, restarted.events.count("fleet.followed"))
}

// With Redis down, nothing waits on it: calls run on the local breakers,
// Watch returns, Degraded is raised once; when Redis is back the view is
// current again and a quorum opens everyone.
func TestRedisDown(t *testing.T) {
	srv := startServer(t)
	ns := namespace(t)
	ps := fleetOf(t, srv.Addr(), ns, 3)
	rounds(t, 2, ps...)

	srv.Stop()
	for _, p := range ps {
		// A round may have timed out before the stop on a busy machine
		// (raising Degraded and Recovered): count from the outage on.
		require.Eventually(t, p.f.Degraded, wait, tick, "process %s", p.id)
		n := p.events.count("fleet.degraded")
		require.Positive(t, n)
		rounds(t, 3, p)
		assert.Equal(t, n, p.events.count("fleet.degraded"), "process %s: Degraded once per outage", p.id)
	}
	// The call path: a pipeline around the breaker works, and trips, alone.
	pl := pipeline.New(breaker.Guard[string](ps[0].b))
	for range 3 {
		_, err := pl.Execute(context.Background(), func(context.Context) (string, error) {
			return "", context.DeadlineExceeded
		})
		require.Error(t, err)
	}
	assert.Equal(t, breaker.Open, ps[0].b.State())
	v, err := pipeline.New(breaker.Guard[string](ps[1].b)).Execute(context.Background(), func(context.Context) (string, error) {
		return "ok", nil
	})
	require.NoError(t, err)
	assert.Equal(t, "ok", v)
	// Watch returns during the outage, after its bounded read.
	other, err := breaker.New(breaker.Config{Name: "other"})
	require.NoError(t, err)
	stop, err := ps[2].f.Watch(other)
	require.NoError(t, err)
	stop()
	rounds(t, 2, ps...)
	assert.Equal(t, 1, ps[0].events.count("fleet.degraded"), "once per outage")

	srv.Start()
	for _, p := range ps {
		// Recovered, and not degraded again: on a busy machine a round of the
		// restarted Redis may still time out, and a second outage and
		// recovery follow.
		require.Eventually(t, func() bool { return p.events.count("fleet.recovered") >= 1 && !p.f.Degraded() }, wait, tick, "process %s", p.id)
	}
	ps[1].trip(t)
	require.Eventually(t, ps[2].refuses, wait, tick, "the view is current again")
}

// Close stops the loop and deletes the process's reports; no goroutine
// outlives it (TestMain checks every test with goleak).
func TestCloseForgets(t *testing.T) {
	addr := redisAddr(t)
	ns := namespace(t)
	ps := fleetOf(t, addr, ns, 2)
	ps[0].trip(t)
	reports(t, ps[0].rdb, ns, reportOpen, 1)
	ps[0].f.Close()
	ps[0].f.Close()
	reports(t, ps[1].rdb, ns, reportOpen, 0)
	_, err := ps[0].f.Watch(ps[0].b)
	assert.ErrorIs(t, err, ErrClosed)
}

func TestWatchRefuses(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", ContextTimeoutEnabled: true})
	defer rdb.Close()
	f, err := New(Config{Redis: rdb, Refresh: refresh})
	require.NoError(t, err)
	defer f.Close()
	unnamed, err := breaker.New(breaker.Config{})
	require.NoError(t, err)
	_, err = f.Watch(unnamed)
	assert.ErrorIs(t, err, ErrUnnamed)
	braced, err := breaker.New(breaker.Config{Name: "a}b"})
	require.NoError(t, err)
	_, err = f.Watch(braced)
	assert.ErrorContains(t, err, "must not contain")
	_, err = f.Watch(nil)
	assert.Error(t, err)
}

// A Redis that stops answering (CLIENT PAUSE) is an outage too: rounds give
// up after their timeout, Watch returns, and the fleet catches up after.
func TestRedisSlow(t *testing.T) {
	srv := startServer(t)
	ns := namespace(t)
	ps := fleetOf(t, srv.Addr(), ns, 2)
	rounds(t, 2, ps...)
	admin := redis.NewClient(&redis.Options{Addr: srv.Addr(), ContextTimeoutEnabled: true})
	defer admin.Close()
	require.NoError(t, admin.Do(context.Background(), "CLIENT", "PAUSE", "1000", "ALL").Err())
	for _, p := range ps {
		require.Eventually(t, func() bool { return p.events.count("fleet.degraded") >= 1 }, wait, tick, "process %s", p.id)
	}
	other, err := breaker.New(breaker.Config{Name: "other"})
	require.NoError(t, err)
	stop, err := ps[0].f.Watch(other)
	require.NoError(t, err)
	stop()
	assert.False(t, ps[1].refuses(), "the call path does not wait")
	for _, p := range ps {
		require.Eventually(t, func() bool { return p.events.count("fleet.recovered") >= 1 }, wait, tick, "process %s", p.id)
	}
}

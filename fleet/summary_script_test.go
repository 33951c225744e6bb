package fleet

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline/fleet/internal/quorum"
	"github.com/resilience-go/pipeline/policy/breaker"
)

// summarize runs summaryScript for p on the breaker whose keys are k.
func summarize(t *testing.T, rdb redis.Scripter, s *settings, k keys, p publication) counts {
	t.Helper()
	ks, args := s.summaryArgs(k, p)
	c, err := countsOf(summary.Run(context.Background(), rdb, ks, args...))
	require.NoError(t, err)
	return c
}

// reportOf is the publication of a report of state by process at at, as a
// process sends it when it does not know its previous report: the script
// moves it to the sets of its state, and prunes.
func reportOf(process string, state byte, at time.Time) publication {
	return publication{process: process, state: state, now: at, changed: true, prune: true}
}

// testClient is a client of the tests' Redis, closed at the end of the test.
func testClient(t *testing.T) *redis.Client {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: redisAddr(t), ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = rdb.Close() })
	return rdb
}

// The window counts a report exactly when quorum.Tally does (at most ttl
// old, or from the future), and forgets it exactly when it is more than
// 10 × ttl old, to the nanosecond of the reader's clock and the
// millisecond of the report's.
func TestWindow(t *testing.T) {
	s := settings{ttl: 3 * time.Second}
	now := time.UnixMilli(1_000_000).Add(400 * time.Microsecond) // between two milliseconds
	w := s.window(now)
	for _, ago := range []time.Duration{0, time.Millisecond, 3*time.Second - time.Millisecond, 3 * time.Second,
		3*time.Second + time.Millisecond, -time.Second, 30 * time.Second, 30*time.Second + time.Millisecond, time.Hour} {
		for _, slip := range []time.Duration{0, 400 * time.Microsecond, time.Millisecond} {
			at := time.UnixMilli(now.Add(-ago).Add(slip).UnixMilli())
			var tl quorum.Tally
			tl.Add(reportOpen, now.Sub(at), s.ttl)
			assert.Equal(t, tl.Seen == 1, at.UnixMilli() >= w.from, "a report %v old counts as Tally says", now.Sub(at))
			assert.Equal(t, now.Sub(at) > 10*s.ttl, at.UnixMilli() < w.forget, "a report %v old is forgotten after 10 × TTL", now.Sub(at))
		}
	}
	on := time.UnixMilli(1_000_000)
	assert.Equal(t, window{from: 997_000, forget: 970_000}, s.window(on), "on a millisecond")
}

// The summary of a breaker's reports: the same reports as the hash of the
// earlier releases held, read at now, count the same.
func TestCount(t *testing.T) {
	rdb := testClient(t)
	k := keysOf(namespace(t), dep)
	now := time.UnixMilli(1_000_000)
	s := settings{ttl: 3 * time.Second, fraction: defaultFraction}
	for _, r := range []struct {
		process string
		state   byte
		ago     time.Duration
	}{
		{"f", reportOpen, time.Hour},                        // dead: forgotten by the next open report
		{"b", reportOpen, 3 * time.Second},                  // just in time
		{"c", reportOpen, 3*time.Second + time.Millisecond}, // stale: not seen
		{"d", reportFollowing, time.Second},                 // seen, not open
		{"e", reportClosed, -time.Second},                   // a clock ahead of ours
		{"a", reportOpen, 0},
	} {
		summarize(t, rdb, &s, k, reportOf(r.process, r.state, now.Add(-r.ago)))
	}
	v := s.viewOf(summarize(t, rdb, &s, k, publication{process: "reader", now: now}))
	assert.Equal(t, 4, v.seen)
	assert.Equal(t, 2, v.open)
	assert.Equal(t, 3, v.need)
	assert.False(t, v.quorum())
	assert.False(t, v.isolated)
	ctx := context.Background()
	for _, set := range []string{k.seen, k.open} {
		assert.ErrorIs(t, rdb.ZScore(ctx, set, "f").Err(), redis.Nil, "the dead report is deleted")
	}
	assert.NoError(t, rdb.ZScore(ctx, k.open, "c").Err(), "a stale report is kept until it is dead")
	n, err := rdb.Exists(ctx, k.seen, k.open, k.following).Result()
	require.NoError(t, err)
	assert.EqualValues(t, 3, n, "the reader wrote nothing, and no set is empty")

	// A state the script does not know is refused, as the hash's garbage was
	// never counted.
	ks, args := s.summaryArgs(k, reportOf("g", reportOpen, now))
	args[1] = "x"
	assert.ErrorContains(t, summary.Run(ctx, rdb, ks, args...).Err(), "the state must be o, c or f")
	assert.Equal(t, v, s.viewOf(summarize(t, rdb, &s, k, publication{process: "reader", now: now})))
}

// A report is its process's member in the seen set, and in the open or the
// following set when it is of that state, scored by its time in Unix
// milliseconds; the sets expire 10 × TTL after they were last renewed.
func TestReportIsItsLatestStateAndTime(t *testing.T) {
	rdb := testClient(t)
	k := keysOf(namespace(t), dep)
	s := settings{ttl: 3 * time.Second, fraction: defaultFraction}
	ctx := context.Background()
	at := time.UnixMilli(1764586800000)
	for _, state := range []byte{reportOpen, reportFollowing, reportClosed, reportOpen, reportFollowing} {
		summarize(t, rdb, &s, k, reportOf("p", state, at))
		for set, member := range map[string]bool{k.seen: true, k.open: state == reportOpen, k.following: state == reportFollowing} {
			score, err := rdb.ZScore(ctx, set, "p").Result()
			if member {
				require.NoError(t, err)
				assert.Equal(t, float64(at.UnixMilli()), score, set)
			} else {
				assert.ErrorIs(t, err, redis.Nil, "%s after %c", set, state)
			}
		}
		at = at.Add(time.Second)
	}
	for _, set := range []string{k.seen, k.following} {
		ttl, err := rdb.PTTL(ctx, set).Result()
		require.NoError(t, err)
		assert.Greater(t, ttl, 9*s.ttl, set)
		assert.LessOrEqual(t, ttl, 10*s.ttl, set)
	}
}

// Over random fleets, with reports of every age and clocks ahead of the
// reader's, the summary counts what quorum.Tally counts of the same
// reports, the rule package simulate runs.
func TestSummaryAgreesWithTally(t *testing.T) {
	rdb := testClient(t)
	ns := namespace(t)
	s := settings{ttl: 3 * time.Second, fraction: defaultFraction}
	rng := rand.New(rand.NewPCG(34, 1))
	states := []byte{reportOpen, reportClosed, reportFollowing}
	for trial := range 40 {
		k := keysOf(ns, fmt.Sprint(trial))
		now := time.UnixMilli(2_000_000_000_000).Add(time.Duration(rng.IntN(1000)) * time.Microsecond)
		var want quorum.Tally
		open := 0
		for p := range rng.IntN(60) + 1 {
			// Ages from 2 × TTL ahead of the reader to 12 × TTL behind, many
			// on the boundaries.
			ago := time.Duration(rng.IntN(14*3000)-6000) * time.Millisecond
			if rng.IntN(4) == 0 {
				ago = s.ttl + time.Duration(rng.IntN(3)-1)*time.Millisecond
			}
			state := states[rng.IntN(3)]
			at := time.UnixMilli(now.Add(-ago).UnixMilli())
			summarize(t, rdb, &s, k, reportOf(fmt.Sprint("p", p), state, at))
			want.Add(state, now.Sub(at), s.ttl)
			if state == reportOpen && now.Sub(at) <= s.ttl {
				open++
			}
		}
		v := s.viewOf(summarize(t, rdb, &s, k, publication{process: "reader", now: now}))
		require.Equal(t, want.Seen, v.seen, "trial %d", trial)
		require.Equal(t, want.Open, v.open, "trial %d", trial)
		require.Equal(t, open, v.open, "trial %d", trial)
	}
}

// A process that stops reporting (it crashed: nothing deletes its report)
// is counted until its latest report is TTL old, not a millisecond after,
// and deleted once it is 10 × TTL old by the next report of its state.
func TestSummaryForgetsAStoppedProcess(t *testing.T) {
	rdb := testClient(t)
	k := keysOf(namespace(t), dep)
	s := settings{ttl: 3 * time.Second, fraction: defaultFraction}
	t0 := time.UnixMilli(1_000_000)
	for _, p := range []string{"a", "b", "crashed"} {
		summarize(t, rdb, &s, k, reportOf(p, reportOpen, t0))
	}
	live := func(at time.Time) view {
		var c counts
		for _, p := range []string{"a", "b"} {
			c = summarize(t, rdb, &s, k, reportOf(p, reportOpen, at))
		}
		return s.viewOf(c)
	}
	v := live(t0.Add(s.ttl))
	assert.Equal(t, 3, v.seen)
	assert.Equal(t, 3, v.open)
	v = live(t0.Add(s.ttl + time.Millisecond))
	assert.Equal(t, 2, v.seen)
	assert.Equal(t, 2, v.open)
	assert.Equal(t, 2, v.need)
	assert.True(t, v.quorum(), "the two live processes are a quorum of two")

	ctx := context.Background()
	live(t0.Add(10 * s.ttl))
	for _, set := range []string{k.seen, k.open} {
		assert.NoError(t, rdb.ZScore(ctx, set, "crashed").Err(), "kept until 10 × TTL")
	}
	live(t0.Add(10*s.ttl + time.Millisecond))
	for _, set := range []string{k.seen, k.open} {
		assert.ErrorIs(t, rdb.ZScore(ctx, set, "crashed").Err(), redis.Nil, "deleted after 10 × TTL")
		n, err := rdb.ZCard(ctx, set).Result()
		require.NoError(t, err)
		assert.EqualValues(t, 2, n)
	}
}

// In a running fleet, a process whose loop stops without deleting its
// report (as a crash would) drops out of the others' count within TTL: the
// quorum of three open processes becomes a quorum of two.
func TestACrashedProcessDropsOut(t *testing.T) {
	addr := redisAddr(t)
	ns := namespace(t)
	ps := fleetOf(t, addr, ns, 3)
	for _, p := range ps {
		p.trip(t)
	}
	reports(t, ps[0].rdb, ns, reportOpen, 3)
	crashed := ps[2]
	crashed.f.cancel() // the loop ends; the reports stay
	<-crashed.f.done
	s := ps[0].f.s
	require.Eventually(t, func() bool {
		v := s.viewOf(summarize(t, ps[0].rdb, &s, keysOf(ns, dep), publication{process: "reader", now: time.Now()}))
		return v.seen == 2 && v.open == 2
	}, wait, tick, "the crashed process stops counting")
	n, err := members(ps[0].rdb, keysOf(ns, dep), reportOpen)
	require.NoError(t, err)
	assert.Equal(t, 3, n, "its report is kept, not counted, until it is dead")
}

// countingDialer counts the bytes a client reads from Redis: the replies.
type countingDialer struct{ read atomic.Int64 }

type countingConn struct {
	net.Conn
	d *countingDialer
}

func (c countingConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.d.read.Add(int64(n))
	return n, err
}

func (d *countingDialer) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	var nd net.Dialer
	c, err := nd.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return countingConn{Conn: c, d: d}, nil
}

// The reply of a round is a few small numbers per breaker, whatever the
// size of the fleet: with 50 processes it is as long as with 2, but for the
// digits of the counts, both for the usual round and for the script. (Each
// reply of the earlier releases' HGETALL held one field per process, about
// 20 bytes each.)
func TestTheReplyDoesNotGrowWithTheFleet(t *testing.T) {
	addr := redisAddr(t)
	var d countingDialer
	rdb := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true, Dialer: d.dial, PoolSize: 1})
	defer rdb.Close()
	seeder := testClient(t)
	clock := clockwork.NewFakeClock()
	type replies struct{ round, script int64 }
	got := map[int]replies{}
	read := func(f func()) int64 {
		before := d.read.Load()
		f()
		return d.read.Load() - before
	}
	for _, n := range []int{2, 2, 50} { // the first time warms the client up (it may dial again after its first commands)
		ns := namespace(t)
		// The loop ticks every hour of the fake clock, so never: the test
		// runs the rounds.
		f, err := New(Config{Redis: rdb, Namespace: ns, Process: "me", Clock: clock, Refresh: time.Hour})
		require.NoError(t, err)
		b, err := breaker.New(breaker.Config{Name: dep})
		require.NoError(t, err)
		stop, err := f.Watch(b)
		require.NoError(t, err)
		k := keysOf(ns, dep)
		for i := range n - 1 {
			state := []byte{reportOpen, reportClosed, reportFollowing}[i%3]
			c := summarize(t, seeder, &f.s, k, reportOf(fmt.Sprint("other-", i), state, clock.Now()))
			require.Equal(t, i+1, c.seen)
		}
		f.round(f.ready(), true) // the script: the first report of the process
		clock.Advance(time.Second)
		var r replies
		r.round = read(func() { f.round(f.ready(), true) }) // the usual round
		r.script = read(func() { summarize(t, rdb, &f.s, k, publication{process: "me", now: clock.Now()}) })
		got[n] = r
		c := summarize(t, seeder, &f.s, k, publication{process: "reader", now: clock.Now()})
		assert.Equal(t, n, c.seen, "fleet of %d", n)
		assert.False(t, f.Degraded())
		stop()
		f.Close()
	}
	t.Logf("a round's reply: %d bytes with 2 processes, %d with 50; the script's: %d and %d",
		got[2].round, got[50].round, got[2].script, got[50].script)
	for _, r := range []replies{got[2], got[50]} {
		assert.Positive(t, r.round)
		assert.Positive(t, r.script)
		assert.Less(t, r.round, int64(32), "small integers and an absent value")
		assert.Less(t, r.script, int64(32), "three small integers")
	}
	assert.LessOrEqual(t, got[50].round-got[2].round, int64(2), "a digit more per count at most")
	assert.LessOrEqual(t, got[50].script-got[2].script, int64(2), "a digit more per count at most")
}

// The usual round refreshes a report with ZADD XX, which adds nothing: when
// the Redis has lost the sets (a restart without persistence, a DEL), the
// next round's script adds the reports back, with their expiry.
func TestLostReportsComeBack(t *testing.T) {
	addr := redisAddr(t)
	ns := namespace(t)
	ps := fleetOf(t, addr, ns, 3)
	ps[0].trip(t)
	reports(t, ps[0].rdb, ns, reportOpen, 1)
	reports(t, ps[0].rdb, ns, reportClosed, 2)
	k := keysOf(ns, dep)
	ctx := context.Background()
	for range 3 {
		rounds(t, 2, ps...)
		require.NoError(t, ps[0].rdb.Del(ctx, k.seen, k.open, k.following).Err())
		reports(t, ps[0].rdb, ns, reportOpen, 1)
		reports(t, ps[0].rdb, ns, reportClosed, 2)
		for _, set := range []string{k.seen, k.open} {
			ttl, err := ps[0].rdb.PTTL(ctx, set).Result()
			require.NoError(t, err)
			assert.Positive(t, ttl, "%s expires", set)
		}
	}
}

// A Redis that lost the script (a restart, a failover, SCRIPT FLUSH) gets
// it again by EVAL, in the same round: no round fails for it.
func TestAFlushedScriptIsSentAgain(t *testing.T) {
	srv := startServer(t) // its own: SCRIPT FLUSH would reach the other tests
	ns := namespace(t)
	ps := fleetOf(t, srv.Addr(), ns, 2) // a new server has no script: Watch and the first rounds send it
	rounds(t, 2, ps...)
	admin := redis.NewClient(&redis.Options{Addr: srv.Addr(), ContextTimeoutEnabled: true})
	defer admin.Close()
	ctx := context.Background()
	for range 3 {
		require.NoError(t, admin.ScriptFlush(ctx).Err())
		rounds(t, 2, ps...)
	}
	ps[0].trip(t)
	reports(t, admin, ns, reportOpen, 1)
	for _, p := range ps {
		assert.Zero(t, p.events.count("fleet.degraded"), "process %s", p.id)
		assert.False(t, p.f.Degraded())
	}
}

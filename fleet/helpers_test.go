package fleet

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/fleet/internal/redistest"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/breaker"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const (
	refresh = 40 * time.Millisecond // a round gets half: enough for a busy machine's Redis
	dep     = "payments"
	wait    = 10 * time.Second // how long Eventually polls: never a timing assertion
	tick    = 5 * time.Millisecond
)

var (
	fail    = outcome.Verdict{Kind: outcome.Transient}
	success = outcome.Verdict{Kind: outcome.OK}
	spaces  atomic.Int64
)

// redisAddr returns the address of the Redis the tests share, or skips.
func redisAddr(t *testing.T) string {
	t.Helper()
	return redistest.Addr(t)
}

// namespace is a namespace no other test uses.
func namespace(t *testing.T) string {
	return fmt.Sprintf("%s-%d-%d", t.Name(), os.Getpid(), spaces.Add(1))
}

// recorder keeps a fleet's events.
type recorder struct {
	mu     sync.Mutex
	events []pipeline.Event
}

func (r *recorder) hook(_ context.Context, src pipeline.Source, e pipeline.Event) {
	if src.Stage != "fleet" {
		panic("fleet event from source " + src.Stage)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

func (r *recorder) count(name string) int {
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

// proc is one process of a fleet: its own Redis client, fleet and breaker.
type proc struct {
	id     string
	rdb    *redis.Client
	f      *Fleet
	b      *breaker.Breaker
	clock  *clockwork.FakeClock // the breaker's
	events *recorder
	stop   func()
}

// start starts a process watching a breaker named dep, and closes it all at
// the end of the test.
func start(t *testing.T, addr, ns, id string) *proc {
	t.Helper()
	return startWith(t, addr, ns, id, refresh)
}

// slowRefresh is the Refresh of a process whose first read of the view a
// test checks: Watch gives that read half of it, which a busy machine meets.
const slowRefresh = time.Second

// startWith starts a process as start does, with the given Refresh.
func startWith(t *testing.T, addr, ns, id string, refresh time.Duration) *proc {
	t.Helper()
	return startHooked(t, addr, ns, id, refresh, nil, nil)
}

// startHooked starts a process as startWith does, its Redis client with
// hook and its fleet on clock when they are not nil.
func startHooked(t *testing.T, addr, ns, id string, refresh time.Duration, hook redis.Hook, clock clockwork.Clock) *proc {
	t.Helper()
	p := &proc{id: id, clock: clockwork.NewFakeClock(), events: &recorder{}}
	p.rdb = redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, ContextTimeoutEnabled: true})
	if hook != nil {
		p.rdb.AddHook(hook)
	}
	b, err := breaker.New(breaker.Config{Name: dep, ConsecutiveFailures: 3, BreakJitter: breaker.JitterNone, Clock: p.clock})
	require.NoError(t, err)
	p.b = b
	p.f, err = New(Config{Redis: p.rdb, Namespace: ns, Process: id, Refresh: refresh, OnEvent: p.events.hook, Clock: clock})
	require.NoError(t, err)
	p.stop, err = p.f.Watch(b)
	require.NoError(t, err)
	t.Cleanup(p.close)
	return p
}

func (p *proc) close() {
	p.stop()
	p.f.Close()
	_ = p.rdb.Close()
}

// trip opens the process's breaker on its own evidence.
func (p *proc) trip(t *testing.T) {
	t.Helper()
	for range 3 {
		tk, err := p.b.Admit()
		require.NoError(t, err)
		p.b.Record(tk, fail, time.Millisecond)
	}
	require.Equal(t, breaker.Open, p.b.State())
}

// refuses reports whether the process's breaker refuses an attempt now.
func (p *proc) refuses() bool {
	tk, err := p.b.Admit()
	if err != nil {
		return true
	}
	p.b.Record(tk, success, time.Millisecond)
	return false
}

// rounds waits until every process's loop has run n more rounds.
func rounds(t *testing.T, n int64, ps ...*proc) {
	t.Helper()
	from := make([]int64, len(ps))
	for i, p := range ps {
		from[i] = p.f.rounds.Load()
	}
	require.Eventually(t, func() bool {
		for i, p := range ps {
			if p.f.rounds.Load() < from[i]+n {
				return false
			}
		}
		return true
	}, wait, tick)
}

// reports waits until the fleet's summary of dep holds want reports of
// state, however old.
func reports(t *testing.T, rdb *redis.Client, ns string, state byte, want int) {
	t.Helper()
	require.Eventually(t, func() bool {
		n, err := members(rdb, keysOf(ns, dep), state)
		return err == nil && n == want
	}, wait, tick)
}

// members counts the processes whose latest report of the breaker whose
// keys are k is of state, however old.
func members(rdb *redis.Client, k keys, state byte) (int, error) {
	ctx := context.Background()
	seen, err := rdb.ZCard(ctx, k.seen).Result()
	if err != nil {
		return 0, err
	}
	open, err := rdb.ZCount(ctx, k.open, "-inf", "(+inf").Result() // not the isolation marker
	if err != nil {
		return 0, err
	}
	following, err := rdb.ZCard(ctx, k.following).Result()
	if err != nil {
		return 0, err
	}
	switch state {
	case reportOpen:
		return int(open), nil
	case reportFollowing:
		return int(following), nil
	}
	return int(seen - open - following), nil
}

// startServer starts a redis-server of the test's own, to stop and start.
func startServer(t *testing.T) *redistest.Server {
	t.Helper()
	return redistest.StartServer(t)
}

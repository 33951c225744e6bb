package fleet

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline/policy/breaker"
)

// pipelines is a go-redis hook that keeps the command names of every
// pipeline its client sends, such as "zadd zcount".
type pipelines struct {
	mu   sync.Mutex
	sent []string
}

func (h *pipelines) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *pipelines) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

func (h *pipelines) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		names := make([]string, len(cmds))
		for i, c := range cmds {
			names[i] = c.Name()
		}
		h.mu.Lock()
		h.sent = append(h.sent, strings.Join(names, " "))
		h.mu.Unlock()
		return next(ctx, cmds)
	}
}

// since returns the pipelines sent from the n-th on.
func (h *pipelines) since(n int) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.sent[min(n, len(h.sent)):]...)
}

func (h *pipelines) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.sent)
}

var _ redis.Hook = (*pipelines)(nil)

// setup reports whether sent is a new connection's setup pipeline (HELLO,
// CLIENT SETINFO), which go-redis sends through the hook too.
func setup(sent string) bool {
	for name := range strings.FieldsSeq(sent) {
		if name != "client" && name != "hello" {
			return false
		}
	}
	return true
}

// manualRefresh is the Refresh of a process whose rounds a test runs by
// hand (manually): its loop never ticks within a test, and its TTL, three
// hours, keeps it from pruning again after its first round.
const manualRefresh = time.Hour

// startManual starts a process whose rounds the test runs (manually), its
// fleet on clock.
func startManual(t *testing.T, addr, ns string, h *pipelines, clock *clockwork.FakeClock) *proc {
	return startHooked(t, addr, ns, "watcher", manualRefresh, h, clock)
}

// manually runs one round of p's fleet on the test's goroutine (its loop,
// at manualRefresh, runs none), a second after the last on clock, the
// fleet's (a report written in the same millisecond as the last looks to
// ZADD XX CH like one missing), and returns the pipelines it sent, but for
// a new connection's setup.
func manually(p *proc, h *pipelines, clock *clockwork.FakeClock) []string {
	clock.Advance(time.Second)
	from := h.count()
	p.f.round(p.f.ready(), true)
	var sent []string
	for _, s := range h.since(from) {
		if !setup(s) {
			sent = append(sent, s)
		}
	}
	return sent
}

// In a healthy fleet a closed process's round is two commands a breaker
// (ZADD XX CH of its report, ZCOUNT of the open set): no count of the
// processes seen and no GET of the control key; and the round that finds
// the breaker stirred, by open reports, reads the full summary in a second
// pipeline and applies it in the same round.
func TestAQuietRoundIsTwoCommandsABreaker(t *testing.T) {
	addr := redisAddr(t)
	ns := namespace(t)
	ps := fleetOf(t, addr, ns, 3)
	h := &pipelines{}
	clock := clockwork.NewFakeClockAt(time.Now())
	watcher := startManual(t, addr, ns, h, clock)
	assert.Equal(t, []string{"evalsha"}, manually(watcher, h, clock), "the first report: the script")
	for range 3 {
		assert.Equal(t, []string{"zadd zcount"}, manually(watcher, h, clock), "a quiet round")
	}
	for _, p := range ps {
		p.trip(t)
	}
	reports(t, watcher.rdb, ns, reportOpen, 3)
	assert.Equal(t, []string{"zadd zcount", "zcount zcount get"}, manually(watcher, h, clock), "the stirred round")
	assert.True(t, watcher.refuses(), "the watcher followed the quorum in that round")
	assert.Equal(t, breaker.Open, watcher.b.State())
}

// A quiet round sees the isolation, set while no process reports open, by
// the marker Isolate adds to the open set, and Reset's clearing too.
func TestAQuietRoundSeesTheIsolation(t *testing.T) {
	addr := redisAddr(t)
	ns := namespace(t)
	h := &pipelines{}
	clock := clockwork.NewFakeClockAt(time.Now())
	watcher := startManual(t, addr, ns, h, clock)
	other := start(t, addr, ns, "other")
	manually(watcher, h, clock) // its first report, by the script
	require.Equal(t, []string{"zadd zcount"}, manually(watcher, h, clock), "a quiet round")
	ctx := context.Background()
	require.NoError(t, other.f.Isolate(ctx, dep))
	assert.Equal(t, []string{"zadd zcount", "zcount zcount get"}, manually(watcher, h, clock), "the stirred round")
	assert.Equal(t, breaker.Isolated, watcher.b.State())
	require.NoError(t, other.f.Reset(ctx, dep))
	manually(watcher, h, clock) // a full round (its report said following): Reset applied
	assert.Equal(t, breaker.Closed, watcher.b.State())
	manually(watcher, h, clock) // its report is closed again: the script
	assert.Equal(t, []string{"zadd zcount"}, manually(watcher, h, clock), "quiet again")
	n, err := watcher.rdb.ZCount(ctx, keysOf(ns, dep).open, "+inf", "+inf").Result()
	require.NoError(t, err)
	assert.Zero(t, n, "Reset removed the marker")
}

// The script puts the marker right by the control key: an isolation set by
// the control key alone (a process of an older version) reaches a quiet
// fleet once any process runs the script, and a marker left without the
// control key goes.
func TestTheScriptKeepsTheMarker(t *testing.T) {
	addr := redisAddr(t)
	ns := namespace(t)
	p := start(t, addr, ns, "a")
	k := keysOf(ns, dep)
	ctx := context.Background()
	require.NoError(t, p.rdb.Set(ctx, k.control, isolateValue, 0).Err())
	s, err := Config{Redis: p.rdb, Namespace: ns}.settings()
	require.NoError(t, err)
	run := func() counts {
		keys, args := s.summaryArgs(k, publication{process: "script", now: p.clock.Now()})
		c, err := countsOf(summary.Run(ctx, p.rdb, keys, args...))
		require.NoError(t, err)
		return c
	}
	c := run()
	assert.True(t, c.isolated)
	assert.Zero(t, c.open, "the marker is not an open report")
	n, err := p.rdb.ZCount(ctx, k.open, "+inf", "+inf").Result()
	require.NoError(t, err)
	assert.EqualValues(t, 1, n, "the script added the marker")
	require.Eventually(t, func() bool { return p.b.State() == breaker.Isolated }, wait, tick)

	require.NoError(t, p.rdb.Del(ctx, k.control).Err())
	assert.False(t, run().isolated)
	n, err = p.rdb.ZCount(ctx, k.open, "+inf", "+inf").Result()
	require.NoError(t, err)
	assert.Zero(t, n, "the script removed the marker")
}

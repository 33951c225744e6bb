package fleet

import (
	"context"
	"strings"
	"sync"
	"testing"

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

// quietly waits until the process's client has sent a quiet round, and
// returns the number of pipelines it has sent.
func quietly(t *testing.T, h *pipelines) int {
	t.Helper()
	require.Eventually(t, func() bool {
		for _, sent := range h.since(0) {
			if sent == "zadd zcount" {
				return true
			}
		}
		return false
	}, wait, tick, "a quiet round")
	return h.count()
}

// In a healthy fleet a closed process's round is two commands a breaker
// (ZADD XX CH of its report, ZCOUNT of the open set): no count of the
// processes seen and no GET of the control key, apart from the script's
// rare runs; and the round that finds the breaker stirred, open reports or
// the isolation, reads the full summary in a second pipeline and applies
// it in the same round.
func TestAQuietRoundIsTwoCommandsABreaker(t *testing.T) {
	addr := redisAddr(t)
	ns := namespace(t)
	ps := fleetOf(t, addr, ns, 3)
	h := &pipelines{}
	watcher := startHooked(t, addr, ns, "watcher", refresh, h)
	rounds(t, 3, watcher)
	from := h.count()
	rounds(t, 10, watcher)
	quiet := 0
	for _, sent := range h.since(from) {
		switch {
		case sent == "zadd zcount":
			quiet++
		case sent == "evalsha": // pruning (settings.pruneAfter)
		case setup(sent): // a new connection's own commands
		default:
			t.Errorf("a healthy fleet's round sent %q", sent)
		}
	}
	assert.GreaterOrEqual(t, quiet, 5, "quiet rounds of 10")

	// Three of four open: the watcher follows, its full read in the round
	// that found them.
	for _, p := range ps {
		p.trip(t)
	}
	require.Eventually(t, watcher.refuses, wait, tick, "the watcher follows the quorum")
	assert.Equal(t, breaker.Open, watcher.b.State())
	assert.Contains(t, h.since(from), "zcount zcount get", "the stirred round's second pipeline")

}

// A quiet round sees the isolation, set while no process reports open, by
// the marker Isolate adds to the open set, and Reset's clearing too.
func TestAQuietRoundSeesTheIsolation(t *testing.T) {
	addr := redisAddr(t)
	ns := namespace(t)
	h := &pipelines{}
	watcher := startHooked(t, addr, ns, "watcher", refresh, h)
	other := start(t, addr, ns, "other")
	from := quietly(t, h)
	ctx := context.Background()
	require.NoError(t, other.f.Isolate(ctx, dep))
	require.Eventually(t, func() bool { return watcher.b.State() == breaker.Isolated }, wait, tick)
	assert.Contains(t, h.since(from), "zcount zcount get", "the stirred round's second pipeline")
	require.NoError(t, other.f.Reset(ctx, dep))
	require.Eventually(t, func() bool { return watcher.b.State() == breaker.Closed }, wait, tick)
	quietly(t, h)
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

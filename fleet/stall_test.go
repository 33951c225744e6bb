package fleet

import (
	"context"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/policy/breaker"
)

// stallProxy forwards TCP connections to a Redis until stall is called;
// from then on it forwards nothing more in either direction but keeps every
// connection open, as a Redis that hangs (or a network that drops packets)
// does. Its goroutines end at the test's cleanup.
type stallProxy struct {
	ln      net.Listener
	target  string
	stalled chan struct{} // closed by stall
	done    chan struct{} // closed at cleanup: the held copies give up
	once    sync.Once
	mu      sync.Mutex
	conns   []net.Conn
	wg      sync.WaitGroup
}

func newStallProxy(t *testing.T, target string) *stallProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &stallProxy{ln: ln, target: target, stalled: make(chan struct{}), done: make(chan struct{})}
	p.wg.Go(p.accept)
	t.Cleanup(func() {
		_ = ln.Close()
		close(p.done)
		p.mu.Lock()
		for _, c := range p.conns {
			_ = c.Close()
		}
		p.mu.Unlock()
		p.wg.Wait()
	})
	return p
}

func (p *stallProxy) addr() string { return p.ln.Addr().String() }

// stall stops the forwarding.
func (p *stallProxy) stall() { p.once.Do(func() { close(p.stalled) }) }

func (p *stallProxy) accept() {
	for {
		in, err := p.ln.Accept()
		if err != nil {
			return
		}
		out, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = in.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, in, out)
		p.mu.Unlock()
		p.wg.Go(func() { p.pipe(out, in) })
		p.wg.Go(func() { p.pipe(in, out) })
	}
}

// pipe copies from src to dst until the proxy stalls; then it holds what it
// read, and reads no more, until the cleanup.
func (p *stallProxy) pipe(dst io.Writer, src io.Reader) {
	buf := make([]byte, 32<<10)
	for {
		select {
		case <-p.stalled:
			<-p.done
			return
		default:
		}
		n, err := src.Read(buf)
		select {
		case <-p.stalled:
			<-p.done
			return
		default:
		}
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// stallBound is what the stalled-Redis tests allow a bounded wait: many
// times the 100 ms a wait is documented to take at most, on a busy machine,
// and far under the 3 to 5 s a go-redis client waits on its own timeouts.
const stallBound = 2 * time.Second

// stalledClient is a client as the docs build it, through a proxy in front
// of the tests' Redis.
func stalledClient(t *testing.T) (*redis.Client, *stallProxy) {
	t.Helper()
	p := newStallProxy(t, redisAddr(t))
	rdb := redis.NewClient(&redis.Options{Addr: p.addr(), ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = rdb.Close() })
	return rdb, p
}

// timed returns how long f took.
func timed(f func()) time.Duration {
	start := time.Now()
	f()
	return time.Since(start)
}

// A Redis that stops answering turns the quota degraded within a fetch's
// Timeout of the first fetch that meets it, and Close returns within its
// Timeout. (With a go-redis client's own timeouts, 5.0 s and 9.9 s.)
func TestAStalledRedisDegradesTheQuotaWithinItsTimeout(t *testing.T) {
	rdb, p := stalledClient(t)
	degraded := make(chan struct{})
	var once sync.Once
	q, err := NewQuota(QuotaConfig{Redis: rdb, Namespace: namespace(t), Name: "partner", Rate: 1000, Lease: 10,
		Processes: 1, OnEvent: func(_ context.Context, _ pipeline.Source, e pipeline.Event) {
			if _, ok := e.(Degraded); ok {
				once.Do(func() { close(degraded) })
			}
		}})
	require.NoError(t, err)
	require.False(t, q.Degraded())
	p.stall()
	for { // spend the lease: the call that finds it empty asks for a fetch
		if _, ok := q.Allow(); !ok {
			break
		}
	}
	select {
	case <-degraded:
	case <-time.After(stallBound):
		t.Fatalf("not degraded %v after the stall", stallBound)
	}
	assert.Less(t, timed(q.Close), stallBound)
}

// NewQuota on a Redis that never answers returns within its Timeout,
// degraded, and Close returns within its Timeout. (With a go-redis client's
// own timeouts, NewQuota took 5.0 s.)
func TestNewQuotaOnAStalledRedisReturnsWithinItsTimeout(t *testing.T) {
	rdb, p := stalledClient(t)
	p.stall()
	var q *Quota
	took := timed(func() {
		var err error
		q, err = NewQuota(QuotaConfig{Redis: rdb, Namespace: namespace(t), Name: "partner", Rate: 1000, Processes: 1})
		require.NoError(t, err)
	})
	assert.Less(t, took, stallBound, "NewQuota took %v", took)
	assert.True(t, q.Degraded())
	assert.Less(t, timed(q.Close), stallBound)
}

// Watch and Close on a fleet whose Redis stalls each return within half a
// Refresh, bounded as documented. (With a go-redis client's own timeouts,
// 5.0 s each at a Refresh of 200 ms.)
func TestAFleetOnAStalledRedisReturnsWithinItsRefresh(t *testing.T) {
	rdb, p := stalledClient(t)
	f, err := New(Config{Redis: rdb, Namespace: namespace(t), Refresh: 200 * time.Millisecond})
	require.NoError(t, err)
	b, err := breaker.New(breaker.Config{Name: dep})
	require.NoError(t, err)
	p.stall()
	var stop func()
	took := timed(func() {
		stop, err = f.Watch(b)
		require.NoError(t, err)
	})
	assert.Less(t, took, stallBound, "Watch took %v", took)
	assert.True(t, f.Degraded())
	assert.Less(t, timed(stop), stallBound)
	took = timed(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		assert.ErrorIs(t, f.Isolate(ctx, dep), context.DeadlineExceeded, "Isolate on a stalled Redis, bounded by its context")
	})
	assert.Less(t, took, stallBound, "Isolate took %v", took)
	assert.Less(t, timed(f.Close), stallBound)
}

// A go-redis client that ignores context deadlines is refused by name,
// whichever kind it is: with it no timeout of ours bounds a call.
func TestAClientThatIgnoresDeadlinesIsRefused(t *testing.T) {
	clients := map[string]redis.UniversalClient{
		"Client":        redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}),
		"ClusterClient": redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{"127.0.0.1:1"}}),
		"Ring":          redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"a": "127.0.0.1:1"}}),
	}
	for name, rdb := range clients {
		t.Run(name, func(t *testing.T) {
			defer rdb.Close()
			_, err := New(Config{Redis: rdb})
			assert.ErrorContains(t, err, "fleet: Config.Redis ignores context deadlines")
			assert.ErrorContains(t, err, "ContextTimeoutEnabled: true")
			_, err = NewQuota(QuotaConfig{Redis: rdb, Name: "partner", Rate: 1, Processes: 1})
			assert.ErrorContains(t, err, "fleet: QuotaConfig.Redis ignores context deadlines")
		})
	}
	// A client that honours deadlines is accepted.
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", ContextTimeoutEnabled: true})
	defer rdb.Close()
	assert.NoError(t, Config{Redis: rdb}.Validate())
	assert.NoError(t, QuotaConfig{Redis: rdb, Name: "partner", Rate: 1, Processes: 1}.Validate())
}

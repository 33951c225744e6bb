package redistest

import (
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// StallProxy forwards TCP connections to a Redis until Stall is called;
// from then on it forwards nothing more in either direction but keeps every
// connection open, as a Redis that hangs (or a network that drops packets)
// does. Its goroutines end at the test's cleanup.
type StallProxy struct {
	ln      net.Listener
	target  string
	stalled chan struct{} // closed by Stall
	done    chan struct{} // closed at cleanup: the held copies give up
	once    sync.Once
	mu      sync.Mutex
	conns   []net.Conn
	wg      sync.WaitGroup
}

// NewStallProxy starts a proxy to the Redis at target.
func NewStallProxy(t *testing.T, target string) *StallProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &StallProxy{ln: ln, target: target, stalled: make(chan struct{}), done: make(chan struct{})}
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

// Addr is the proxy's address.
func (p *StallProxy) Addr() string { return p.ln.Addr().String() }

// Stall stops the forwarding.
func (p *StallProxy) Stall() { p.once.Do(func() { close(p.stalled) }) }

func (p *StallProxy) accept() {
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
func (p *StallProxy) pipe(dst io.Writer, src io.Reader) {
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

// StallBound is what the stalled-Redis tests allow a bounded wait: many
// times the 100 ms a wait is documented to take at most, on a busy machine,
// and far under the 3 to 5 s a go-redis client waits on its own timeouts.
const StallBound = 2 * time.Second

// StalledClient is a client as the docs build it, through a proxy in front
// of the tests' Redis, closed at the end of the test.
func StalledClient(t *testing.T) (*redis.Client, *StallProxy) {
	t.Helper()
	p := NewStallProxy(t, Addr(t))
	rdb := redis.NewClient(&redis.Options{Addr: p.Addr(), ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = rdb.Close() })
	return rdb, p
}

// Timed returns how long f took.
func Timed(f func()) time.Duration {
	start := time.Now()
	f()
	return time.Since(start)
}

package quota

import (
	"context"
	"io"
	"net"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cutProxy forwards TCP connections to a Redis until cut: then it closes
// every connection and closes each new one as soon as it is accepted, as a
// Redis that has gone away does (a call fails at once), until restore. The
// Redis behind it keeps its data. Its goroutines end at the test's cleanup.
type cutProxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex // guards down and conns
	down   bool
	conns  []net.Conn
	wg     sync.WaitGroup
}

func newCutProxy(t *testing.T, target string) *cutProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &cutProxy{ln: ln, target: target}
	p.wg.Go(p.accept)
	t.Cleanup(func() {
		_ = ln.Close()
		p.cut()
		p.wg.Wait()
	})
	return p
}

func (p *cutProxy) addr() string { return p.ln.Addr().String() }

// cut closes every connection, and refuses new ones until restore.
func (p *cutProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = true
	for _, c := range p.conns {
		_ = c.Close()
	}
	p.conns = nil
}

// restore forwards new connections again.
func (p *cutProxy) restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = false
}

func (p *cutProxy) accept() {
	for {
		in, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		down := p.down
		p.mu.Unlock()
		if down {
			_ = in.Close()
			continue
		}
		out, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = in.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, in, out)
		p.mu.Unlock()
		for _, dir := range [][2]net.Conn{{in, out}, {out, in}} {
			p.wg.Go(func() {
				_, _ = io.Copy(dir[1], dir[0])
				_ = dir[0].Close()
				_ = dir[1].Close()
			})
		}
	}
}

// owedTo reads what the fleet owes the quota in Redis: the tokens its
// balance is below none, 0 if it is not.
func owedTo(t *testing.T, rdb *redis.Client, k keys, rate float64, burst int) float64 {
	t.Helper()
	ctx := context.Background()
	now, err := rdb.Time(ctx).Result()
	require.NoError(t, err)
	raw, err := rdb.Get(ctx, k.tat).Result()
	if err == redis.Nil {
		return 0
	}
	require.NoError(t, err)
	tat, err := strconv.ParseFloat(raw, 64)
	require.NoError(t, err)
	ahead := (tat - float64(now.UnixMicro())) / 1e6 * rate // tokens tat is ahead of now
	return max(0, ahead-float64(burst))
}

// When Redis comes back, the calls each process admitted on its local share
// are charged to the fleet's quota, up to the share's burst, so that a
// window that spans the return admits no more than the bound, Rate × t +
// Burst + processes × Lease, plus what the fleet still owes Redis at its end
// (the charge of the process that came back last, as far as the first one
// spent it meanwhile).
//
// The worst window: two processes, each holding its lease, lose Redis and
// spend the lease and their local shares' bursts (Burst/2 each) at once,
// just before Redis comes back with a full bucket (the outage lasted longer
// than a Burst's worth of the rate, or Redis lost its data): the window has
// admitted Burst + processes × Lease already. Both come back at their next
// probe and spend all they can. The quotas run on a fake clock: it stands
// still while the shares spend (so that they admit their bursts and no
// more, as on real time they would in an instant), and runs fast once Redis
// is back, so that the quotas' pauses pass and each fetches as often as
// Redis answers (the tokens run on Redis's clock, which the test does not
// touch). With the charge, 46 calls in 0.51 s against a bound of 46.5, and
// nothing owed by then; without it, the fleet spent Redis's full bucket on
// top: 86. Fetches may take a second, so that a loaded machine does not
// make a second outage of a slow one.
func TestQuotaChargesTheLocalShareAfterAnOutage(t *testing.T) {
	p := newCutProxy(t, redisAddr(t))
	clock := clockwork.NewFakeClock()
	const rate, burst, lease, processes = 5.0, 40, 2, 2
	cfg := Config{Namespace: namespace(t), Rate: rate, Burst: burst, Lease: lease, Processes: processes,
		Timeout: time.Second, Clock: clock}
	probe := ProbeTimeouts * cfg.Timeout
	a := newClient(t, p.addr(), cfg)
	b := newClient(t, p.addr(), cfg)
	require.Eventually(t, func() bool {
		a.q.Allow() // spends the lease, so that a fetches again and counts b
		return a.q.Seen() == processes
	}, wait, tick)
	require.Equal(t, processes, b.q.Seen())
	cs := []*client{a, b}
	for _, c := range cs {
		require.Eventually(t, func() bool { return c.q.tokens.Load() == lease }, wait, tick, "a full lease")
	}
	direct := redis.NewClient(&redis.Options{Addr: redisAddr(t), ContextTimeoutEnabled: true})
	defer direct.Close()

	// Gone: each process's next fetch (the idle one, a probe on) fails, and
	// it turns to its share.
	require.NoError(t, clock.BlockUntilContext(t.Context(), 2), "both loops idle")
	p.cut()
	clock.Advance(probe)
	for _, c := range cs {
		require.Eventually(t, c.q.Degraded, wait, tick)
		require.Equal(t, int64(lease), c.q.tokens.Load(), "each holds its lease")
	}
	require.NoError(t, clock.BlockUntilContext(t.Context(), 2), "both loops pause for a probe")

	// The window begins: each spends its lease and its share's burst.
	start := time.Now()
	var local int64
	for _, c := range cs {
		for {
			if _, ok := c.q.Allow(); !ok {
				break
			}
			local++
		}
	}
	require.Equal(t, int64(burst+processes*lease), local, "the window holds its bound already")

	// Back, with a full bucket: each probes, is charged, and spends all it
	// gets, the quotas' clock running fast.
	require.NoError(t, direct.Del(context.Background(), a.q.keys.tat).Err())
	p.restore()
	require.Eventually(t, func() bool {
		if !a.q.Degraded() && !b.q.Degraded() {
			return true
		}
		clock.Advance(probe) // the next probe (a first one may meet a connection cut)
		return false
	}, wait, tick)
	stop := make(chan struct{})
	var fast sync.WaitGroup
	fast.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
				clock.Advance(time.Duration(lease / rate * float64(time.Second) / 10))
				runtime.Gosched()
			}
		}
	})
	counts := make([]int64, len(cs))
	var wg sync.WaitGroup
	for i, c := range cs {
		wg.Go(func() { counts[i], _ = hammer(c.q, 2, 500*time.Millisecond) })
	}
	wg.Wait()
	close(stop)
	fast.Wait()
	owed := owedTo(t, direct, a.q.keys, rate, burst) // before the window ends: Redis has earned no more than the window
	elapsed := time.Since(start).Seconds()

	after := counts[0] + counts[1]
	total := local + after
	bound := rate*elapsed + burst + processes*lease
	t.Logf("admitted %d in %.3fs: %d on the local shares, %d after the return; charged %d and %d; "+
		"owed at the end %.1f; bound %.1f", total, elapsed, local, after, a.q.charged.Load(), b.q.charged.Load(), owed, bound)
	for _, c := range cs {
		assert.Equal(t, int64(burst/processes), c.q.charged.Load(), "the share's burst, all it admitted")
		assert.Equal(t, 1, c.events.count("fleet.degraded"), "no second outage")
	}
	assert.LessOrEqual(t, float64(total), bound+owed, "Rate × t + Burst + processes × Lease + what is owed")
	assert.LessOrEqual(t, owed, float64(processes*lease), "owed: at most what the first back drew before the other's charge")
}

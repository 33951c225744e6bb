package quota

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
)

// stageEvents keeps the events a pipeline's stages emit.
type stageEvents struct {
	mu     sync.Mutex
	events []pipeline.Event
}

func (r *stageEvents) hook(_ context.Context, _ pipeline.Source, e pipeline.Event) {
	if _, attempt := e.(pipeline.AttemptFinished); attempt {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

func (r *stageEvents) all() []pipeline.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]pipeline.Event(nil), r.events...)
}

// waiting is a quota that earns a token every 100 s (so that Redis earns
// none during a test) and holds two, with a stage that waits up to an hour
// on a fake clock.
type waiting struct {
	*client
	clock  *clockwork.FakeClock
	events *stageEvents
	pl     *pipeline.Pipeline[string]
}

func newWaiting(t *testing.T, addr string, maxWait time.Duration) *waiting {
	w := &waiting{clock: clockwork.NewFakeClock(), events: &stageEvents{}}
	w.client = newClient(t, addr, Config{Namespace: namespace(t), Rate: 0.01, Burst: 2, Lease: 2,
		Processes: 1, MaxWait: maxWait, Clock: w.clock})
	w.pl = pipeline.New(Guard[string](w.q)).With(pipeline.Options[string]{OnEvent: w.events.hook})
	return w
}

func ran(context.Context) (string, error) { return "ok", nil }

// execute runs a call through the stage on a goroutine of its own.
func (w *waiting) execute(ctx context.Context) <-chan error {
	done := make(chan error, 1)
	go func() {
		_, err := w.pl.Execute(ctx, ran)
		done <- err
	}()
	return done
}

// spend spends the process's two tokens, and waits until its loop has made
// the fetch that the first call asked for, found Redis empty, and paused on
// the fake clock (the idle loop's timer is stopped before that fetch, so the
// one timer left is the pause).
func (w *waiting) spend(t *testing.T) {
	t.Helper()
	for range 2 {
		_, err := w.pl.Execute(context.Background(), ran)
		require.NoError(t, err)
	}
	require.Eventually(t, func() bool { return w.q.fetches.Load() == 2 }, wait, tick)
	require.NoError(t, w.clock.BlockUntilContext(t.Context(), 1), "the loop pauses")
}

// A call that finds no token waits for the next fetch, on the quota's
// clock, and runs once it brings one; one that waits MaxWait in vain is
// refused.
func TestQuotaGuardWaitsForTheNextFetch(t *testing.T) {
	w := newWaiting(t, redisAddr(t), time.Hour)
	w.spend(t)

	done := w.execute(context.Background())
	require.NoError(t, w.clock.BlockUntilContext(t.Context(), 2), "the loop's pause and the call's MaxWait")
	// Redis fills up (as if 200 s had passed on its clock), and the loop's
	// pause (two tokens' worth, 200 s) ends: its fetch wakes the call.
	require.NoError(t, w.rdb.Del(context.Background(), w.q.keys.tat).Err())
	w.clock.Advance(200 * time.Second)
	require.NoError(t, <-done)
	assert.Equal(t, []pipeline.Event{pipeline.Waited{Wait: 200 * time.Second}}, w.events.all())

	// A wait that MaxWait ends.
	w = newWaiting(t, redisAddr(t), time.Hour)
	w.spend(t)
	done = w.execute(context.Background())
	require.NoError(t, w.clock.BlockUntilContext(t.Context(), 2))
	w.clock.Advance(time.Hour)
	err := <-done
	stop, ok := errors.AsType[*pipeline.StopError](err)
	require.True(t, ok, "%v", err)
	assert.Equal(t, pipeline.RateLimited, stop.Reason)
	assert.Equal(t, "quota", stop.Stage)
	assert.Greater(t, stop.RetryAfter, 99*time.Second, "the next token, as Redis said: 100 s")
	assert.LessOrEqual(t, stop.RetryAfter, 100*time.Second)
	assert.Contains(t, w.events.all(), pipeline.Event(pipeline.Stopped{Err: stop}))
}

// A call never waits past its deadline, nor for a token that comes later
// than it may wait: it is refused at once (Execute returns with the fake
// clock standing still), taking nothing.
func TestQuotaGuardNeverWaitsPastTheDeadline(t *testing.T) {
	w := newWaiting(t, redisAddr(t), time.Hour)
	w.spend(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // the next token is 100 s away
	defer cancel()
	_, err := w.pl.Execute(ctx, ran)
	stop, ok := errors.AsType[*pipeline.StopError](err)
	require.True(t, ok, "%v", err)
	assert.Equal(t, pipeline.RateLimited, stop.Reason, "a refusal, not the deadline")
	assert.NoError(t, ctx.Err())

	short := newWaiting(t, redisAddr(t), time.Minute) // MaxWait below the 100 s to the next token
	short.spend(t)
	_, err = short.pl.Execute(context.Background(), ran)
	assert.ErrorIs(t, err, pipeline.RateLimited)
	for _, e := range short.events.all() {
		assert.IsType(t, pipeline.Stopped{}, e, "no wait")
	}
}

// A waiting call whose ctx ends returns Interrupted, and one waiting when
// the quota closes is refused.
func TestQuotaGuardWaitEndsWithCtxOrClose(t *testing.T) {
	w := newWaiting(t, redisAddr(t), time.Hour)
	w.spend(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := w.execute(ctx)
	require.NoError(t, w.clock.BlockUntilContext(t.Context(), 2))
	cancel()
	err := <-done
	stop, ok := errors.AsType[*pipeline.StopError](err)
	require.True(t, ok, "%v", err)
	assert.Equal(t, pipeline.Canceled, stop.Reason)
	assert.ErrorIs(t, err, context.Canceled)

	done = w.execute(context.Background())
	require.NoError(t, w.clock.BlockUntilContext(t.Context(), 2))
	w.q.Close()
	assert.ErrorIs(t, <-done, pipeline.RateLimited)
}

// While Redis is down, a waiting call sleeps until the local share's next
// token, on the quota's clock.
func TestQuotaGuardWaitsOnTheLocalShare(t *testing.T) {
	clock := clockwork.NewFakeClock()
	c := newClient(t, "127.0.0.1:1", Config{Namespace: namespace(t), Rate: 10, Burst: 4, Processes: 2,
		Timeout: 50 * time.Millisecond, MaxWait: time.Second, Clock: clock})
	require.True(t, c.q.Degraded())
	events := &stageEvents{}
	pl := pipeline.New(Guard[string](c.q)).With(pipeline.Options[string]{OnEvent: events.hook})
	for range 2 { // the local share's burst: Burst/Processes
		_, err := pl.Execute(context.Background(), ran)
		require.NoError(t, err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := pl.Execute(context.Background(), ran)
		done <- err
	}()
	// The loop's next probe (500 ms), the call's MaxWait, and the local
	// share's next token (5 a second: 200 ms).
	require.NoError(t, clock.BlockUntilContext(t.Context(), 3))
	clock.Advance(200 * time.Millisecond)
	require.NoError(t, <-done)
	assert.Equal(t, []pipeline.Event{pipeline.Waited{Wait: 200 * time.Millisecond}}, events.all())
}

// Four processes, each with its own Redis client and Quota, call through a
// stage that waits up to 20 ms, as fast as they can for three seconds: the
// fleet admits no more than the bound and most of the rate, calls do wait,
// and every call not admitted is a quota refusal. (Fetches may take a
// second, as in TestQuotaFleetHammer.)
func TestQuotaGuardWaitingHammer(t *testing.T) {
	addr := redisAddr(t)
	ns := namespace(t)
	const processes, rate, burst = 4, 2000.0, 100
	const d = 3 * time.Second
	start := time.Now()
	var admitted, refused, waited atomic.Int64
	var wg sync.WaitGroup
	var lease int64
	for range processes {
		c := newClient(t, addr, Config{Namespace: ns, Rate: rate, Burst: burst, Processes: processes,
			Timeout: time.Second, MaxWait: 20 * time.Millisecond})
		lease = int64(c.q.Lease())
		pl := pipeline.New(Guard[string](c.q)).With(pipeline.Options[string]{
			OnEvent: func(_ context.Context, _ pipeline.Source, e pipeline.Event) {
				if _, ok := e.(pipeline.Waited); ok {
					waited.Add(1)
				}
			}})
		for range 4 {
			wg.Go(func() {
				for end := start.Add(d); time.Now().Before(end); {
					_, err := pl.Execute(context.Background(), ran)
					switch {
					case err == nil:
						admitted.Add(1)
					case errors.Is(err, pipeline.RateLimited):
						refused.Add(1)
					default:
						t.Errorf("not a refusal: %v", err)
						return
					}
				}
			})
		}
	}
	wg.Wait()
	elapsed := time.Since(start).Seconds()
	bound := rate*elapsed + burst + processes*float64(lease)
	t.Logf("admitted %d in %.3fs (%.1f%% of Rate × t; bound %.0f), %d after a wait, %d refused",
		admitted.Load(), elapsed, 100*float64(admitted.Load())/(rate*elapsed), bound, waited.Load(), refused.Load())
	assert.LessOrEqual(t, float64(admitted.Load()), bound)
	assert.GreaterOrEqual(t, float64(admitted.Load()), 0.8*rate*elapsed, "the quota is used")
	assert.Positive(t, waited.Load(), "calls wait for their tokens")
}

// A call that waits for its token allocates only the timer of its wait
// (with the real clock, time.NewTimer's three: its channel, the channel's
// buffer and the timer): its place in the queue and its wake-up channel are
// kept from one waiting call to the next. The tokens come from a goroutine of the test, which deposits one as
// a fetch would once the call waits.
func TestQuotaAWaitingCallAllocatesItsTimer(t *testing.T) {
	c := newClient(t, redisAddr(t), Config{Namespace: namespace(t), Rate: 0.001, Burst: 1, Lease: 1,
		Processes: 1, MaxWait: time.Hour})
	_, ok := c.q.Allow()
	require.True(t, ok, "the one token Redis held")
	require.Eventually(t, func() bool { return c.q.fetches.Load() == 2 }, wait, tick, "Redis is empty: the loop pauses 1,000 s")
	pl := pipeline.New(Guard[string](c.q))
	// Each run: the goroutine deposits a token once the call waits, or, if
	// the call was admitted without waiting (a token left in the lease),
	// deposits nothing and ends the run when the call does.
	next, done, stop := make(chan struct{}), make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
	runs:
		for {
			select {
			case <-stop:
				return
			case <-next:
			}
			for c.q.queued.Load() == 0 {
				select {
				case <-done: // admitted without waiting
					continue runs
				default:
					runtime.Gosched()
				}
			}
			c.q.deposit(1)
			<-done
		}
	})
	defer func() {
		close(stop)
		wg.Wait()
	}()
	ctx := context.Background()
	allocs := testing.AllocsPerRun(50, func() {
		next <- struct{}{}
		_, err := pl.Execute(ctx, ran)
		done <- struct{}{}
		if err != nil {
			t.Fatal(err)
		}
	})
	assert.LessOrEqual(t, allocs, 3.0)
	t.Logf("%v allocations per waiting call", allocs)
}

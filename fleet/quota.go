package fleet

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/policy/ratelimit"
)

// QuotaKind is the kind of stage a Quota makes: the Stage of its stop errors
// and events.
const QuotaKind = "quota"

// Quota is a rate limit shared by every process of a fleet through Redis:
// together they admit QuotaConfig.Rate calls a second and at most Burst at
// once, as a quota the dependency grants the whole service.
//
// The tokens live in Redis, in one key updated by one script; each process
// leases them a few at a time (QuotaConfig.Lease) and spends them locally,
// so the call path ([Quota.Allow], [QuotaGuard]) takes a token from the lease
// with one atomic operation and never waits on Redis. A background goroutine
// fetches the next lease when half of it is spent. Whatever the fleet's
// size, in any stretch of time t the fleet admits at most
// Rate × t + Burst + processes × Lease calls (the leases held unused at
// its start). Close gives the unused lease back.
//
// Each fetch registers the process in Redis, and an idle process fetches
// at least every ProbeTimeouts × Timeout, so that every fetch learns how many
// processes share the quota (Seen). While Redis cannot be reached, each
// process admits Rate/seen calls a second on its own (Rate/Processes if it
// never reached Redis), raises Degraded once, and tries Redis again every
// ProbeTimeouts × Timeout; the first fetch that succeeds raises Recovered and
// the fleet's limit applies again.
//
// A call through [QuotaGuard] that finds no token may wait for one, up to
// QuotaConfig.MaxWait: it is woken by the next fetch, never polls.
//
// A Quota is safe for concurrent use. Close stops its goroutine.
type Quota struct {
	s        quotaSettings
	keys     quotaKeys
	interval float64 // microseconds per token
	source   pipeline.Source
	ctx      context.Context // cancelled by Close: bounds every fetch
	cancel   context.CancelFunc
	done     chan struct{} // closed when the loop has returned
	once     sync.Once     // Close
	kick     chan struct{} // one pending request for a fetch

	// The call path's state, each a single word.
	tokens   atomic.Int64                       // tokens leased and not yet spent
	wait     atomic.Int64                       // nanoseconds until Redis holds a token, as last seen
	degraded atomic.Bool                        // the latest fetch failed
	closed   atomic.Bool                        // Close has begun: nothing more is admitted
	refused  atomic.Pointer[pipeline.StopError] // the latest refusal, shared by those with its hint
	// local is the local share, used only while degraded: Rate/Processes
	// until a fetch has counted the processes seen, then rebuilt for
	// Rate/seen as each outage begins (before degraded is set).
	local atomic.Pointer[ratelimit.Limiter]
	seen  atomic.Int64 // the processes the latest fetch that reached Redis counted; 0 before

	// Owned by whichever goroutine fetches: NewQuota's caller, then the loop.
	degradedAt time.Time

	// The calls waiting for a token (see await). ready is closed, and
	// replaced, when a fetch ends or Close begins while waiters is above 0:
	// a waiter reads ready before it looks for a token, so that a fetch
	// ending after it looked always wakes it.
	waiters atomic.Int64
	mu      sync.Mutex    // guards ready
	ready   chan struct{} // made outside any caller's synctest bubble: by NewQuota or the loop

	fetches atomic.Int64 // fetches made, for tests
	given   atomic.Int64 // the tokens Close gave back, for tests
}

// NewQuota builds a Quota from cfg, fetches its first lease (waiting on
// Redis for at most QuotaConfig.Timeout; if Redis does not answer, it raises
// Degraded and starts on the local share) and starts its goroutine. It
// refuses an impossible QuotaConfig with every problem named.
func NewQuota(cfg QuotaConfig) (*Quota, error) {
	s, err := cfg.settings()
	if err != nil {
		return nil, err
	}
	local, err := s.share(int64(s.processes))
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	q := &Quota{
		s:        s,
		keys:     quotaKeysOf(s.namespace, s.name),
		interval: s.interval(),
		source:   pipeline.Source{Stage: QuotaKind, Name: s.name},
		ctx:      ctx,
		cancel:   cancel,
		done:     make(chan struct{}),
		kick:     make(chan struct{}, 1),
		ready:    make(chan struct{}),
	}
	q.local.Store(local)
	q.wait.Store(int64(q.intervalDuration()))
	pause, _ := q.fetch()
	go q.loop(pause)
	return q, nil
}

// Stage says that q makes a quota stage, named after it.
func (q *Quota) Stage() pipeline.StageInfo {
	return pipeline.StageInfo{Kind: QuotaKind, Name: q.s.name}
}

// Lease returns the tokens one fetch asks for (QuotaConfig.Lease or its
// default).
func (q *Quota) Lease() int { return int(q.s.lease) }

// Burst returns the fleet's burst (QuotaConfig.Burst or its default).
func (q *Quota) Burst() int { return int(q.s.burst) }

// MaxWait returns how long a call through the quota's stage may wait for a
// token (QuotaConfig.MaxWait).
func (q *Quota) MaxWait() time.Duration { return q.s.maxWait }

// Degraded reports whether the latest fetch failed to reach Redis, so that
// the process admits its local share.
func (q *Quota) Degraded() bool { return q.degraded.Load() }

// Seen returns how many processes shared the quota at the latest fetch that
// reached Redis (those that fetched within SeenProbes × ProbeTimeouts ×
// Timeout, this one included), or 0 if none has.
func (q *Quota) Seen() int { return int(q.seen.Load()) }

// Allow takes a token if this process holds one (or, while Redis is down,
// if its local share has one) and reports true; otherwise it takes nothing
// and reports false with wait, how long until the fleet's quota holds a token
// again as this process last heard from Redis (at least one token's
// interval). It never waits, and it allocates nothing. After Close it
// admits nothing more.
func (q *Quota) Allow() (wait time.Duration, ok bool) {
	for {
		n := q.tokens.Load()
		if n <= 0 {
			break
		}
		if q.tokens.CompareAndSwap(n, n-1) {
			if n-1 <= q.s.low() {
				q.nudge()
			}
			return 0, true
		}
	}
	if q.closed.Load() {
		return time.Duration(q.wait.Load()), false
	}
	q.nudge()
	if q.degraded.Load() {
		return q.local.Load().Allow()
	}
	return time.Duration(q.wait.Load()), false
}

// nudge asks the loop for a fetch, without waiting.
func (q *Quota) nudge() {
	select {
	case q.kick <- struct{}{}:
	default:
	}
}

// Close stops the quota's goroutine, waits for it, gives the tokens still
// leased back to Redis, so that the other processes can spend them, and
// takes this process off the processes seen. It waits on Redis for at most
// QuotaConfig.Timeout (and not at all if Redis was down and no token is
// left); if it fails, the tokens are lost until Redis earns them again,
// which only under-uses the quota, and the process ages out of the
// processes seen. From the moment Close begins, the quota admits
// nothing more: Allow reports false, and the calls waiting in [QuotaGuard]
// are refused (those waiting on the local share within a probe). Close does not close QuotaConfig.Redis. It may be called more
// than once.
func (q *Quota) Close() {
	q.once.Do(func() {
		q.closed.Store(true)
		q.wake() // the waiters see closed and give up
		q.cancel()
		<-q.done
		n := q.tokens.Swap(0) // after the loop: nothing adds to the lease any more
		if n <= 0 && q.degraded.Load() {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), q.s.timeout)
		defer cancel()
		given, err := giveBack(ctx, q.s.redis, q.keys, q.interval, n, q.s.process, 0)
		if err == nil {
			q.given.Store(given)
		}
	})
}

// loop fetches a lease whenever the lease runs low, pausing pause first,
// and at least every probe so that the process counts as seen.
func (q *Quota) loop(pause time.Duration) {
	defer close(q.done)
	for {
		if pause > 0 {
			t := q.s.clock.NewTimer(pause)
			select {
			case <-q.ctx.Done():
				t.Stop()
				return
			case <-t.Chan():
			}
		}
		if !q.degraded.Load() && q.tokens.Load() > q.s.low() {
			t := q.s.clock.NewTimer(q.s.probe())
			select {
			case <-q.ctx.Done():
				t.Stop()
				return
			case <-q.kick:
				t.Stop()
				pause = 0
				continue
			case <-t.Chan(): // idle: fetch to be seen, and top the lease up
			}
		}
		var stop bool
		if pause, stop = q.fetch(); stop {
			return
		}
	}
}

// fetch tops the lease up from Redis and returns how long to pause before
// the next fetch if the lease is still low (0 if not), or stop when the
// quota is closing. It records whether Redis was reached, raising Degraded
// or Recovered when that changed.
func (q *Quota) fetch() (pause time.Duration, stop bool) {
	// Asking for none still registers the process, and tells a degraded
	// quota that Redis answers.
	want := max(0, q.s.lease-q.tokens.Load())
	ctx, cancel := context.WithTimeout(q.ctx, q.s.timeout)
	granted, wait, seen, err := grant(ctx, q.s.redis, q.keys, takeRequest{interval: q.interval,
		burst: q.s.burst, want: want, process: q.s.process, ttl: q.s.seenFor()})
	cancel()
	q.fetches.Add(1)
	if q.ctx.Err() != nil { // closing: not an outage
		return 0, true
	}
	now := q.s.clock.Now()
	if err != nil {
		if !q.degraded.Load() {
			if n := q.seen.Load(); n > 0 {
				if local, err := q.s.share(n); err == nil {
					q.local.Store(local)
				}
			}
			q.degradedAt = now
			q.degraded.Store(true)
			q.emit(Degraded{Err: err, At: now})
		}
		q.wake() // the waiters turn to the local share
		return q.s.probe(), false
	}
	q.seen.Store(seen)
	q.tokens.Add(granted)
	q.wait.Store(int64(max(wait, q.intervalDuration())))
	recovered := q.degraded.Load()
	q.degraded.Store(false)
	q.wake()
	if recovered {
		q.emit(Recovered{After: now.Sub(q.degradedAt), At: now})
	}
	if q.tokens.Load() > q.s.low() {
		return 0, false
	}
	// Starved: the fleet spends the quota as fast as it is earned. Ask again
	// when a token is there, and no sooner than the fleet earns a lease, so
	// that a starved process makes at most Rate/Lease fetches a second.
	return max(wait, time.Duration(float64(q.s.lease)*q.interval*float64(time.Microsecond))), false
}

// intervalDuration is the time the fleet takes to earn a token.
func (q *Quota) intervalDuration() time.Duration {
	return max(time.Microsecond, time.Duration(q.interval*float64(time.Microsecond)))
}

// refusal is the stop error of a refusal with the hint wait, rounded up to
// the millisecond. Refusals with the same hint share one error, the latest
// one made: treat it as read-only.
func (q *Quota) refusal(wait time.Duration) *pipeline.StopError {
	wait = (wait + time.Millisecond - 1).Truncate(time.Millisecond)
	if e := q.refused.Load(); e != nil && e.RetryAfter == wait {
		return e
	}
	e := &pipeline.StopError{Stage: QuotaKind, Name: q.s.name, Reason: pipeline.RateLimited, RetryAfter: wait}
	q.refused.Store(e)
	return e
}

func (q *Quota) emit(e pipeline.Event) {
	if q.s.onEvent != nil {
		q.s.onEvent(context.Background(), q.source, e)
	}
}

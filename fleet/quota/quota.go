package quota

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/criticality"
	"github.com/resilience-go/pipeline/fleet"
	"github.com/resilience-go/pipeline/internal/queue"
	"github.com/resilience-go/pipeline/policy/ratelimit"
)

// stageKind is the kind of stage a Quota makes: the Stage of its stop
// errors and events.
const stageKind = "quota"

// Quota is a rate limit shared by every process of a fleet through Redis:
// together they admit Config.Rate calls a second and at most Burst at
// once, as a quota the dependency grants the whole service.
//
// The tokens live in Redis, in one key updated by one script; each process
// leases them a few at a time (Config.Lease) and spends them locally,
// so the call path ([Quota.Allow], [Guard]) takes a token from the lease
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
// never reached Redis), raises [fleet.Degraded] once, and tries Redis again
// every ProbeTimeouts × Timeout; the first fetch that succeeds raises
// [fleet.Recovered] and the fleet's limit applies again.
//
// A call through [Guard] that finds no token may wait for one, up to
// Config.MaxWait, in a queue served by criticality level (Critical
// first) and, within a level, first come, first served: a token that
// reaches the process goes to the oldest waiting call of the highest level,
// which alone is woken, and a call arriving while others wait queues
// behind those of its level. The
// calls admitted on the local share during an outage are charged to Redis
// by the first fetch that reaches it again, up to the share's burst.
//
// A Quota is safe for concurrent use. Close stops its goroutine.
type Quota struct {
	s        settings
	keys     keys
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
	// owed counts the calls admitted on the local share since the latest
	// fetch that reached Redis: the next one charges them (see fetch).
	owed atomic.Int64

	// Owned by whichever goroutine fetches: New's caller, then the loop.
	degradedAt time.Time

	// The calls waiting for a token, by level, first come, first served (see
	// quota_queue.go). mu guards the fields below it up to ready; queued
	// is the queue's length, written under mu and read by Allow without it.
	queued  atomic.Int64
	mu      sync.Mutex
	waiting queue.Levels[*waiter] // the queue, by level, oldest first within one
	spare   *waiter               // waiters not in use, each with its channel, linked by nextSpare
	spares  int                   // how many
	bare    int                   // waiters in the queue that have no channel yet
	flush   bool                  // ready must be closed: a waiter without a channel has news
	ready   chan struct{}         // closed, and replaced, by the loop to wake the waiters without a channel
	tend    chan struct{}         // one pending request for the loop to tend the queue

	fetches atomic.Int64 // fetches made, for tests
	given   atomic.Int64 // the tokens Close gave back, for tests
	charged atomic.Int64 // the calls of the local share charged to Redis, for tests
}

// New builds a Quota from cfg, fetches its first lease (waiting on
// Redis for at most Config.Timeout; if Redis does not answer, it raises
// [fleet.Degraded] and starts on the local share) and starts its goroutine. It
// refuses an impossible Config with every problem named.
func New(cfg Config) (*Quota, error) {
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
		keys:     keysOf(s.namespace, s.name),
		interval: s.interval(),
		source:   pipeline.Source{Stage: stageKind, Name: s.name},
		ctx:      ctx,
		cancel:   cancel,
		done:     make(chan struct{}),
		kick:     make(chan struct{}, 1),
		ready:    make(chan struct{}),
		tend:     make(chan struct{}, 1),
	}
	q.local.Store(local)
	q.wait.Store(int64(q.intervalDuration()))
	pause, _ := q.fetch()
	go q.loop(pause)
	return q, nil
}

// Stage says that q makes a quota stage, named after it.
func (q *Quota) Stage() pipeline.StageInfo {
	return pipeline.StageInfo{Kind: stageKind, Name: q.s.name}
}

// Lease returns the tokens one fetch asks for (Config.Lease or its
// default).
func (q *Quota) Lease() int { return int(q.s.lease) }

// Burst returns the fleet's burst (Config.Burst or its default).
func (q *Quota) Burst() int { return int(q.s.burst) }

// MaxWait returns how long a call through the quota's stage may wait for a
// token (Config.MaxWait).
func (q *Quota) MaxWait() time.Duration { return q.s.maxWait }

// Degraded reports whether the latest fetch failed to reach Redis, so that
// the process admits its local share.
func (q *Quota) Degraded() bool { return q.degraded.Load() }

// Seen returns how many processes shared the quota at the latest fetch that
// reached Redis (those that fetched within SeenProbes × ProbeTimeouts ×
// Timeout, this one included), or 0 if none has.
func (q *Quota) Seen() int { return int(q.seen.Load()) }

// Allow takes a token if this process holds one (or, while Redis is down,
// if its local share has one) and no call waits in [Guard] for one,
// and reports true; otherwise it takes nothing and reports false with wait,
// how long until the fleet's quota holds a token again as this process last
// heard from Redis (at least one token's interval; while Redis is down, the
// local share's). The calls already waiting come first: while any waits,
// Allow refuses, even if the lease holds a token at that instant, since it
// is theirs. It spends as a Default call (see Config.Shares). It never
// waits, and it allocates nothing. After Close it admits nothing more.
func (q *Quota) Allow() (wait time.Duration, ok bool) { return q.allow(criticality.Default) }

// allow is Allow for a call of level l.
func (q *Quota) allow(l criticality.Level) (wait time.Duration, ok bool) {
	if q.queued.Load() == 0 && q.take(l) {
		return 0, true
	}
	if q.closed.Load() {
		return time.Duration(q.wait.Load()), false
	}
	q.nudge()
	if q.degraded.Load() {
		local := q.local.Load()
		if q.queued.Load() > 0 {
			return time.Duration(float64(time.Second) / local.Rate()), false
		}
		if wait, ok = local.Allow(); ok {
			q.owed.Add(1)
		}
		return wait, ok
	}
	return time.Duration(q.wait.Load()), false
}

// take takes a token from the lease for a call of level l, if the lease
// holds one that l's share lets it spend, and asks for a fetch once the
// lease is down to half.
func (q *Quota) take(l criticality.Level) bool {
	for {
		n := q.tokens.Load()
		if n <= 0 || !q.spends(l, n) {
			return false
		}
		if q.tokens.CompareAndSwap(n, n-1) {
			if n-1 <= q.s.low() {
				q.nudge()
			}
			return true
		}
	}
}

// spends reports whether a call of level l may spend a token of the lease
// while it holds n: whether fewer than l's share of a lease are spent.
func (q *Quota) spends(l criticality.Level, n int64) bool {
	return l == criticality.Critical || q.s.shares.Admits(l, float64(q.s.lease-n), float64(q.s.lease))
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
// Config.Timeout (and not at all if Redis was down and no token is
// left); if it fails, the tokens are lost until Redis earns them again,
// which only under-uses the quota, and the process ages out of the
// processes seen. From the moment Close begins, the quota admits
// nothing more: Allow reports false, and the calls waiting in [Guard]
// are refused (those waiting on the local share within a probe). Close does not close Config.Redis. It may be called more
// than once.
func (q *Quota) Close() {
	q.once.Do(func() {
		q.closed.Store(true)
		q.shut() // the waiters see closed and give up
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
// and at least every probe so that the process counts as seen. While it
// waits it tends the queue of waiting calls when one asks (see tendQueue).
func (q *Quota) loop(pause time.Duration) {
	defer close(q.done)
	for {
		if pause > 0 {
			if _, closing := q.idle(pause, false); closing {
				return
			}
		}
		if !q.degraded.Load() && q.tokens.Load() > q.s.low() {
			kicked, closing := q.idle(q.s.probe(), true)
			if closing {
				return
			}
			if kicked {
				pause = 0
				continue
			}
			// idle: fetch to be seen, and top the lease up
		}
		var stop bool
		if pause, stop = q.fetch(); stop {
			return
		}
	}
}

// idle waits d on the quota's clock, tending the queue whenever a waiting
// call asks, and reports whether it ended early: on a request for a fetch
// (only when kickable) or because the quota is closing.
func (q *Quota) idle(d time.Duration, kickable bool) (kicked, closing bool) {
	t := q.s.clock.NewTimer(d)
	defer t.Stop()
	var kick <-chan struct{}
	if kickable {
		kick = q.kick
	}
	for {
		select {
		case <-q.ctx.Done():
			return false, true
		case <-kick:
			return true, false
		case <-q.tend:
			q.tendQueue()
		case <-t.Chan():
			return false, false
		}
	}
}

// fetch tops the lease up from Redis and returns how long to pause before
// the next fetch if the lease is still low (0 if not), or stop when the
// quota is closing. It records whether Redis was reached, raising
// fleet.Degraded or fleet.Recovered when that changed.
//
// It charges the calls admitted on the local share since the latest fetch
// that reached Redis, in the same script and before it takes the lease, up
// to the share's burst: that is the most a share admits above its rate in
// any stretch of time, so it is the most the process can have taken, just
// before Redis came back, beyond what Redis would have granted it (the rate
// itself Redis earned meanwhile; only its bucket's cap threw it away).
// Charging more would make the fleet pay again for the rate the outage
// allowed, and after a long outage refuse it for as long again. What is
// charged may drive the fleet's balance below zero, to be earned back at
// the rate. Calls admitted beyond the cap are forgiven.
func (q *Quota) fetch() (pause time.Duration, stop bool) {
	// Asking for none still registers the process, and tells a degraded
	// quota that Redis answers.
	want := max(0, q.s.lease-q.tokens.Load())
	owed := q.owed.Load()
	debt := min(owed, int64(q.local.Load().Burst()))
	ctx, cancel := context.WithTimeout(q.ctx, q.s.timeout)
	granted, wait, seen, err := grant(ctx, q.s.redis, q.keys, takeRequest{interval: q.interval,
		burst: q.s.burst, want: want, debt: debt, process: q.s.process, ttl: q.s.seenFor()})
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
			q.rouse() // the waiters turn to the local share
			q.emit(fleet.Degraded{Err: err, At: now})
		}
		return q.s.probe(), false
	}
	q.owed.Add(-owed) // charged, up to the cap; the rest is forgiven
	q.charged.Add(debt)
	q.seen.Store(seen)
	q.wait.Store(int64(max(wait, q.intervalDuration())))
	recovered := q.degraded.Load()
	q.degraded.Store(false)
	q.deposit(granted)
	if recovered {
		q.emit(fleet.Recovered{After: now.Sub(q.degradedAt), At: now})
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
	e := &pipeline.StopError{Stage: stageKind, Name: q.s.name, Reason: pipeline.RateLimited, RetryAfter: wait}
	q.refused.Store(e)
	return e
}

func (q *Quota) emit(e pipeline.Event) {
	if q.s.onEvent != nil {
		q.s.onEvent(context.Background(), q.source, e)
	}
}

package fleet

import (
	"context"
	"time"

	"github.com/jonboulle/clockwork"
)

// QuotaWaited reports that a call through [QuotaGuard] found no token,
// waited Wait for one (on the quota's clock), and went on. It is emitted only
// when the pipeline has an event hook; refusals are reported as
// pipeline.Stopped.
type QuotaWaited struct {
	Wait time.Duration
}

// Name returns "quota.waited".
func (QuotaWaited) Name() string { return "quota.waited" }

// wake wakes the calls waiting for a token, if there are any, so that they
// look again.
func (q *Quota) wake() {
	if q.waiters.Load() == 0 {
		return
	}
	q.mu.Lock()
	close(q.ready)
	q.ready = make(chan struct{})
	q.mu.Unlock()
}

// readyChan returns the channel the next wake closes.
func (q *Quota) readyChan() <-chan struct{} {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.ready
}

// waitLimit is how long a call with ctx may wait for a token: MaxWait, and
// no later than ctx's deadline.
func (q *Quota) waitLimit(ctx context.Context) time.Duration {
	limit := q.s.maxWait
	if limit > 0 {
		if deadline, ok := ctx.Deadline(); ok {
			// Deadlines run on real time (the bubble's, under testing/synctest).
			limit = max(min(limit, time.Until(deadline)), 0)
		}
	}
	return limit
}

// await waits for a token for at most limit on the quota's clock, and
// reports true once it has taken one. It reports false, with the latest
// hint, when limit has passed, when the hint says that the next token comes
// later than the time left, when the quota is closed, or (with a zero hint)
// when ctx is done.
//
// Tokens come to a healthy quota only with a fetch, so the waiter sleeps
// until the next fetch ends (wake); a degraded one earns them on the local
// share, so the waiter sleeps until the local share's next token, or a
// probe if that is sooner, and then looks again: it learns of a recovery or
// of Close within a probe.
func (q *Quota) await(ctx context.Context, limit time.Duration) (wait time.Duration, ok bool) {
	q.waiters.Add(1)
	defer q.waiters.Add(-1)
	clock := q.s.clock
	end := clock.Now().Add(limit)
	timeout := clock.NewTimer(limit)
	defer timeout.Stop()
	for {
		ready := q.readyChan() // before looking, so that no fetch is missed
		if wait, ok = q.Allow(); ok {
			return 0, true
		}
		if q.closed.Load() || wait > clock.Until(end) {
			return wait, false
		}
		var earned <-chan time.Time
		var local clockwork.Timer
		if q.degraded.Load() {
			// The local share earns tokens on the caller's clock: sleep until
			// its next one, at most a probe, and look again. A degraded
			// waiter does not wait on ready, which belongs to the quota's
			// goroutine: in a synctest bubble, waiting on a channel from
			// outside it would hold the bubble's time still, and the share's
			// token would never come.
			local = clock.NewTimer(min(wait, q.s.probe()))
			earned, ready = local.Chan(), nil
		}
		timedOut, done := false, false
		select {
		case <-ready:
		case <-earned:
		case <-timeout.Chan():
			timedOut = true
		case <-ctx.Done():
			done = true
		}
		if local != nil {
			local.Stop()
		}
		switch {
		case done:
			return 0, false
		case timedOut:
			return q.Allow() // a last look: the token may have come just now
		}
	}
}

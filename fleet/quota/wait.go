package quota

import (
	"context"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/resilience-go/pipeline/criticality"
)

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

// await waits in the queue for a token, for at most limit on the quota's
// clock, and reports true once the call has one. It reports false, with the
// latest hint, when limit has passed, when the hint says that the next token
// comes later than the time left, when the quota is closed, or (with a zero
// hint) when ctx is done; a token handed to the call as its ctx ended goes
// on to the next call, and one handed to it as its limit passed is its own.
//
// A healthy quota hands tokens out as the fetches bring them, and the call
// sleeps until one is handed to it (or until the quota changes); a degraded
// one earns them on the local share, so the call sleeps until the share's
// next token, or a probe if that is sooner, and then hands out what the
// share holds, oldest call first: it learns of a recovery or of Close within
// a probe. A degraded call waits on no channel of the quota's: in a synctest
// bubble, waiting on a channel from outside it would hold the bubble's time
// still, and the share's token would never come.
func (q *Quota) await(ctx context.Context, limit time.Duration) (wait time.Duration, ok bool) {
	clock := q.s.clock
	// The timer comes before the call joins the queue, so that whoever sees
	// the call waiting may move a fake clock past its limit.
	timeout := clock.NewTimer(limit)
	defer timeout.Stop()
	end := clock.Now().Add(limit)
	level := criticality.From(ctx) // read before the lock: ctx.Value may be the caller's code
	q.mu.Lock()
	if q.closed.Load() {
		q.mu.Unlock()
		return time.Duration(q.wait.Load()), false
	}
	w := q.join(end, level)
	for {
		// The call is in the queue, or was handed a token; mu is held.
		wait = q.serve(true)
		if w.granted {
			return q.admit(ctx, w)
		}
		if wait == 0 {
			wait = time.Duration(q.wait.Load())
		}
		if q.closed.Load() || wait > clock.Until(end) {
			q.leave(w)
			q.mu.Unlock()
			return wait, false
		}
		degraded := q.degraded.Load()
		wake := w.wake
		if wake == nil {
			wake = q.ready
		}
		q.mu.Unlock()

		var earned <-chan time.Time
		var local clockwork.Timer
		if degraded {
			local = clock.NewTimer(min(wait, q.s.probe()))
			earned, wake = local.Chan(), nil
		}
		timedOut := false
		select {
		case <-wake:
		case <-earned:
		case <-timeout.Chan():
			timedOut = true
		case <-ctx.Done():
		}
		if local != nil {
			local.Stop()
		}

		q.mu.Lock()
		switch {
		case ctx.Err() != nil:
			if w.granted {
				q.handOn(w) // the caller is gone: the next call gets its token
			} else {
				q.leave(w)
			}
			q.mu.Unlock()
			return 0, false
		case timedOut:
			wait = q.serve(true) // a last look: the token may have come just now
			if w.granted {
				return q.admit(ctx, w)
			}
			if wait == 0 {
				wait = time.Duration(q.wait.Load())
			}
			q.leave(w)
			q.mu.Unlock()
			return wait, false
		}
	}
}

// admit lets w's call, which has been handed a token, go on, and unlocks
// mu; a token of the local share is owed to Redis (see fetch). A call whose
// ctx has ended by then is not admitted: its token goes on to the next call
// (it may have come while the call was awake for another reason and had
// not looked at ctx yet).
func (q *Quota) admit(ctx context.Context, w *waiter) (wait time.Duration, ok bool) {
	if ctx.Err() != nil {
		q.handOn(w)
		q.mu.Unlock()
		return 0, false
	}
	share := w.share
	q.release(w)
	q.mu.Unlock()
	if share {
		q.owed.Add(1)
	}
	return 0, true
}

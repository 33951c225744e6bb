package quota

import (
	"time"

	"github.com/resilience-go/pipeline/criticality"
	"github.com/resilience-go/pipeline/internal/queue"
)

// The queue of the calls waiting in Guard for a token, by criticality
// level and, within a level, first come, first served. A token that reaches
// the process goes to the oldest waiting call of the highest level (serve),
// and a call that arrives while others wait goes behind those of its level:
// Allow refuses it, and a call that may wait joins the queue's tail, even if
// the lease holds tokens at that instant (a fetch has added them and not yet
// handed them out: they are the waiting calls'). A call whose context ends
// after a token was handed to it passes the token on to the next (handOn);
// one whose wait runs out as its token comes keeps it.
//
// Each waiting call is woken by a channel of its own, so that a fetch wakes
// the calls it serves and no others. Those channels must be made where the
// quota was built: a channel made inside a testing/synctest bubble may not
// be touched from outside it (the runtime aborts the program), and the
// fetches that hand the tokens out run on the quota's goroutine, outside the
// bubbles its callers may be in. So the quota's goroutine makes them, and
// the quota keeps each for the next call once its call is done (spare). A
// call that finds no spare waits on ready, closed by the quota's goroutine
// whenever such a call has news, and asks that goroutine for a channel of
// its own (tend), which it uses from then on.
//
// While Redis is down, a waiting call sleeps on a timer of its own until the
// local share's next token instead (see await), and the call that wakes
// first hands the share's tokens out, oldest call first.

// maxSpares is the most waiters (and their channels) the quota keeps for
// reuse: enough for as many calls waiting at once as a process usually has,
// without keeping a burst's worth of them for good.
const maxSpares = 1024

// waiter is one call waiting for a token. Its fields are guarded by the
// quota's mu.
type waiter struct {
	wake      chan struct{}        // buffered: a token was handed over, or the quota changed; nil until the quota's goroutine makes it
	links     queue.Links[*waiter] // its place in the queue
	nextSpare *waiter              // the next among the spares
	end       time.Time            // when its wait runs out, on the quota's clock as the call read it
	level     criticality.Level    // its call's: the queue serves higher levels first
	granted   bool                 // a token is this call's: it has left the queue
	share     bool                 // that token came from the local share
}

// Links is w's place in the queue.
func (w *waiter) Links() *queue.Links[*waiter] { return &w.links }

// join appends a waiter for a call of level l whose wait runs out at end to
// the queue, behind the calls of its level, and returns it. mu must be
// held.
func (q *Quota) join(end time.Time, l criticality.Level) *waiter {
	w := q.spare
	if w != nil {
		q.spare, w.nextSpare = w.nextSpare, nil
		q.spares--
	} else {
		w = &waiter{}
		q.bare++
		q.askTend()
	}
	w.end, w.level = end, l
	q.waiting.Push(l, w)
	q.queued.Add(1)
	return w
}

// unlink takes w out of the queue. mu must be held.
func (q *Quota) unlink(w *waiter) {
	q.waiting.Remove(w.level, w)
	if w.wake == nil {
		q.bare--
	}
	q.queued.Add(-1)
}

// serve hands the tokens there are to the waiting calls, oldest first: the
// lease's, and, when caller is set and Redis is down, the local share's. It
// returns the share's hint if the share ran out with calls still waiting,
// and 0 otherwise. Only a call may take from the share (caller), since the
// share runs on its callers' clock: the quota's goroutine, which may run on
// another (outside a synctest bubble), would move it. mu must be held.
func (q *Quota) serve(caller bool) time.Duration {
	if q.closed.Load() {
		return 0
	}
	for q.waiting.Len() > 0 {
		share := false
		w, l, _ := q.waiting.Front()
		if !q.take(l) { // a lower level could spend no more than l
			if !caller || !q.degraded.Load() {
				return 0
			}
			wait, ok := q.local.Load().Allow()
			if !ok {
				return wait
			}
			share = true
		}
		q.unlink(w)
		w.granted, w.share = true, share
		q.signal(w)
	}
	return 0
}

// handOn passes the token handed to w, whose call has given up, on: a
// token of the lease goes back to it and on to the waiting calls its
// levels' shares allow (see serve); one of the local share to the next
// waiting call, or, if none waits, nowhere (the share cannot take it
// back). It releases w. mu must be held.
func (q *Quota) handOn(w *waiter) {
	share := w.share
	q.release(w)
	if !share {
		q.tokens.Add(1)
		q.serve(false)
		return
	}
	if next, _, ok := q.waiting.Front(); ok && !q.closed.Load() {
		q.unlink(next)
		next.granted, next.share = true, share
		q.signal(next)
	}
}

// leave takes w, to which no token was handed, out of the queue and
// releases it. mu must be held.
func (q *Quota) leave(w *waiter) {
	q.unlink(w)
	q.release(w)
}

// release keeps w, out of the queue and done with, for the next call that
// waits: its channel drained, if it has one and the quota keeps fewer than
// maxSpares. mu must be held, so that nothing is sent on it meanwhile.
func (q *Quota) release(w *waiter) {
	if w.wake == nil || q.spares >= maxSpares {
		return
	}
	select {
	case <-w.wake:
	default:
	}
	*w = waiter{wake: w.wake, nextSpare: q.spare}
	q.spare = w
	q.spares++
}

// signal wakes w's call: on its channel, or, for one without a channel, by
// asking the quota's goroutine to close ready. mu must be held.
func (q *Quota) signal(w *waiter) {
	if w.wake != nil {
		select {
		case w.wake <- struct{}{}:
		default: // it has a wake-up pending already
		}
		return
	}
	q.flush = true
	q.askTend()
}

// askTend asks the quota's goroutine to tend the queue, without waiting.
func (q *Quota) askTend() {
	select {
	case q.tend <- struct{}{}:
	default:
	}
}

// tendQueue gives each waiting call without a channel one of its own and
// wakes, by closing ready, the calls that wait on it. It runs on the
// quota's goroutine (or New's), where the channels may be made.
func (q *Quota) tendQueue() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.tendLocked()
}

// tendLocked is tendQueue; mu must be held. After Close has begun it does
// nothing: Close has closed ready for good.
func (q *Quota) tendLocked() {
	if q.closed.Load() {
		return
	}
	if q.bare > 0 {
		for w := range q.waiting.All() {
			if w.wake == nil {
				w.wake = make(chan struct{}, 1)
			}
		}
		q.bare, q.flush = 0, true // they still wait on ready
	}
	if q.flush {
		close(q.ready)
		q.ready = make(chan struct{})
		q.flush = false
	}
}

// deposit adds the n tokens a fetch brought to the lease and hands them to
// the waiting calls, oldest first. It wakes, too, the calls whose wait runs
// out before the fleet's next token, as the fetch heard it, so that they
// are refused at once. It runs on the quota's goroutine (or New's).
func (q *Quota) deposit(n int64) {
	q.tokens.Add(n)
	q.mu.Lock()
	defer q.mu.Unlock()
	q.serve(false)
	if q.waiting.Len() > 0 {
		hint := time.Duration(q.wait.Load())
		for w := range q.waiting.All() {
			if hint > q.s.clock.Until(w.end) {
				q.signal(w)
			}
		}
	}
	q.tendLocked()
}

// rouse wakes every waiting call, so that each looks at the quota again:
// Redis has just gone, and they turn to the local share. It runs on the
// quota's goroutine (or New's).
func (q *Quota) rouse() {
	q.mu.Lock()
	defer q.mu.Unlock()
	for w := range q.waiting.All() {
		q.signal(w)
	}
	q.flush = true
	q.tendLocked()
}

// shut wakes every waiting call once Close has begun: each finds the quota
// closed and gives up. It closes ready for good, since it may run inside a
// synctest bubble where no new channel may be made for the quota.
func (q *Quota) shut() {
	q.mu.Lock()
	defer q.mu.Unlock()
	for w := range q.waiting.All() {
		if w.wake != nil {
			select {
			case w.wake <- struct{}{}:
			default:
			}
		}
	}
	close(q.ready)
}

// Package callctx is the context the pipeline's own stages derive for a call or
// an attempt. It behaves as one the context package derives (Err, Done,
// Deadline, Value, context.Cause, context.AfterFunc, and children derived from
// it with the context package), and costs less where a call spends:
//
//   - A deadline needs no runtime timer of its own: the stage that sets it asks
//     a [Schedule] (one timer for all the stage's calls) to expire it. Arming a
//     runtime timer per call is what makes a deadline expensive on a network
//     call, because the runtime wakes its network poller for every new earliest
//     timer.
//   - Layers of ours nest without allocating a channel or registering with
//     each other until something waits on one: a whole-call timeout, a hedge's
//     copy and an attempt timeout make one Done channel between them, the
//     innermost's, when the work asks for it.
//   - A stage may lend the context it hands inward to a timeout right inside
//     it ([Ctx.Lend]), which then sets its deadline on that context rather
//     than derive a child: a hedge's copy and its attempt timeout make one
//     context, not two.
//
// A Ctx answers context.Cause with the cause it was canceled with, as
// context.WithCancelCause's would; its Err is context.DeadlineExceeded when it
// expired and context.Canceled when it was canceled.
package callctx

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// closed is the Done channel of a Ctx canceled before anybody asked for it.
var closed = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

// Ctx is a cancelable context derived from a parent, with an optional deadline
// and an optional value. Make one with [WithCancel] or [WithDeadline]; end it
// with Cancel or Expire.
type Ctx struct {
	parent   context.Context
	up       *Ctx      // parent, when the parent is one of ours
	deadline time.Time // the earlier of its own and the parent's; zero: none
	key, val any       // the one value it carries; key nil for none

	ended   atomic.Bool  // err and cause are set and final
	watched atomic.Bool  // the parent's cancellation reaches it: Err need not ask the parent
	done    atomic.Value // chan struct{}, made on first Done

	mu       sync.Mutex
	watching bool  // watch has begun
	lent     bool  // see Lend: the next deadline derived from it may be set on it
	err      error // set once, before ended
	cause    error
	self     bool      // ended by its own Cancel or Expire, not its parent's
	kid      *Ctx      // the first layer of ours registered below it
	fn       afterFunc // the first function AfterFunc registered
	nextID   uint64
	unwatch  func() bool // undoes the registration with a parent not ours
	more     *more       // what few contexts need, made on first use

	at     Entry // its place on the schedule that expires it, if any
	expiry error // the cause it expires with

	// Set once taken (see take), on the goroutine of the attempt it was lent
	// for, and read there.
	taken       bool
	returned    time.Duration // see Returned
	hasReturned bool          // returned is set
}

// more is what few contexts need, kept apart so that a context stays small:
// the kids and AfterFunc functions after the first, and the holder of its
// cause.
type more struct {
	holder context.Context // a canceled context.WithCancelCause carrying the cause, for context.Cause
	kids   []*Ctx
	fns    []afterFunc
}

// extra returns c.more, making it if need be. c.mu is held.
func (c *Ctx) extra() *more {
	if c.more == nil {
		c.more = new(more)
	}
	return c.more
}

// afterFunc is a function registered with AfterFunc, and its number for stop.
type afterFunc struct {
	id uint64
	f  func()
}

// WithCancel returns a cancelable child of parent that carries val for key
// (key nil: no value).
func WithCancel(parent context.Context, key, val any) *Ctx {
	c := &Ctx{parent: parent, key: key, val: val}
	if up, ok := parent.(*Ctx); ok {
		c.up = up
	}
	c.deadline, _ = parent.Deadline()
	return c
}

// WithDeadline returns a cancelable child of parent that expires at d with
// cause, as context.WithDeadlineCause's would, timed by s; now is s's time.
// If the parent's deadline is earlier, the child keeps it and ends with the
// parent, as the context package's does.
//
// A parent of ours that was lent (see [Ctx.Lend]) and is untouched since is
// not derived from but takes the deadline itself, and WithDeadline returns
// the parent: check for that (the result == parent) to leave the ending of
// the context to the stage that lent it.
func WithDeadline(parent context.Context, s *Schedule, now, d time.Time, cause error) *Ctx {
	if p, ok := parent.(*Ctx); ok && p.take(s, now, d, cause) {
		return p
	}
	c := WithCancel(parent, nil, nil)
	c.tighten(s, now, d, cause)
	return c
}

// tighten gives c the deadline d with cause, unless it has an earlier one
// from its parent.
func (c *Ctx) tighten(s *Schedule, now, d time.Time, cause error) {
	if c.deadline.IsZero() || !c.deadline.Before(d) {
		c.deadline, c.expiry = d, cause
		s.Add(&c.at, c, now, d)
	}
}

// Parent is the context c was derived from.
func (c *Ctx) Parent() context.Context { return c.parent }

// Lend marks c, before it is handed to the next stage of a pipeline, as a
// context that stage may take over: if the next stage derives a deadline
// from it, with nothing between, WithDeadline sets the deadline on c itself
// instead of making a child. A hedge lends each copy's context to the
// attempt timeout inside it, so that the two make one context, not two.
//
// The stage that lends c must treat it from then on as the one it handed
// over, not as a parent of it: it may cancel it and read its value, but its
// Err and Deadline may be the taker's. Call Lend on the goroutine that made
// c, before handing it over.
func (c *Ctx) Lend() { c.lent = true }

// take sets the deadline d with cause on c itself if c was lent and nothing
// has touched it since: it has not ended, nobody has asked for its Done
// channel or registered with it. It reports whether it did; a lent context
// is taken once.
func (c *Ctx) take(s *Schedule, now, d time.Time, cause error) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.lent || c.watching || c.ended.Load() || c.kid != nil || c.fn.f != nil {
		return false
	}
	c.lent = false
	c.taken = true
	c.tighten(s, now, d, cause)
	return true
}

// Returned keeps r, the reading of the clock (clock.Read) that ended the
// attempt run with c, if c was lent and taken: the attempt ran right inside
// the stage that took c (the pipeline calls Returned only when that stage is
// a timeout), which does not wait after the attempt returns, so that the
// stage that lent c may take r as the time its copy returned (ReturnedAt)
// rather than read the clock again. Call it on the goroutine that ran the
// attempt.
func (c *Ctx) Returned(r time.Duration) {
	if c.taken {
		c.returned, c.hasReturned = r, true
	}
}

// ReturnedAt is the reading Returned kept, if it kept one. Call it on the
// goroutine that ran the attempt, after it returned.
func (c *Ctx) ReturnedAt() (time.Duration, bool) { return c.returned, c.hasReturned }

// Disarm takes c off s, the schedule that was to expire it, so that its own
// deadline no longer ends it; its parent's still does. Deadline keeps
// reporting the deadline, which no longer applies. It does nothing if c
// has expired already or was not on s.
func (c *Ctx) Disarm(s *Schedule) { s.Remove(&c.at) }

// Due expires c, when its schedule says its deadline has come.
func (c *Ctx) Due() { c.Expire(c.expiry) }

// Cancel ends c with context.Canceled, as a CancelFunc would. It is safe to
// call more than once and from any goroutine; only the first ending counts.
func (c *Ctx) Cancel() { c.end(context.Canceled, context.Canceled, true) }

// Expire ends c with context.DeadlineExceeded and cause (nil: the error
// itself), as an expiring context.WithDeadlineCause would.
func (c *Ctx) Expire(cause error) { c.end(context.DeadlineExceeded, cause, true) }

// Deadline is the earlier of c's own deadline and its parent's.
func (c *Ctx) Deadline() (time.Time, bool) { return c.deadline, !c.deadline.IsZero() }

// Err is nil until c is done, then why: its own ending's, or its parent's.
func (c *Ctx) Err() error {
	if c.ended.Load() {
		return c.err
	}
	if c.watched.Load() { // the parent's ending would have ended c
		return nil
	}
	return c.parentErr()
}

// parentErr is the parent's Err.
func (c *Ctx) parentErr() error {
	if c.up != nil {
		return c.up.Err()
	}
	return c.parent.Err()
}

// Cause is what context.Cause(c) returns, without the lookup.
func (c *Ctx) Cause() error {
	if c.ended.Load() {
		if c.self {
			return c.cause
		}
		return context.Cause(c.parent)
	}
	if c.Err() == nil {
		return nil
	}
	return context.Cause(c.parent)
}

// Done returns a channel closed when c is done. Asking for it makes c hear of
// its parent's cancellation from then on.
func (c *Ctx) Done() <-chan struct{} {
	if d, ok := c.done.Load().(chan struct{}); ok {
		return d
	}
	c.mu.Lock()
	d, ok := c.done.Load().(chan struct{})
	if !ok {
		d = closed
		if !c.ended.Load() {
			d = make(chan struct{})
		}
		c.done.Store(d)
	}
	c.mu.Unlock()
	c.watch()
	return d
}

// Value is c's own value for its key; for any other key, its parent's. Once c
// has ended on its own, it answers the context package's lookup of the
// nearest canceled context with one that carries c's cause, so that
// context.Cause(c), and the cause of any context derived from c, is c's.
func (c *Ctx) Value(key any) any {
	for { // up the layers of ours without a call each: a span's key is looked up in every attempt
		if c.key != nil && key == c.key {
			return c.val
		}
		if c.ended.Load() && c.self {
			if v := c.causeHolder().Value(key); v != nil {
				return v
			}
		}
		if c.up == nil {
			return c.parent.Value(key)
		}
		c = c.up
	}
}

// causeHolder returns a canceled context.WithCancelCause carrying c's cause,
// made on first use: it answers only the context package's own lookup, so
// that context.Cause finds c's cause.
func (c *Ctx) causeHolder() context.Context {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.extra()
	if m.holder == nil {
		h, cancel := context.WithCancelCause(context.Background())
		cancel(c.cause)
		m.holder = h
	}
	return m.holder
}

// String names c, for debugging.
func (c *Ctx) String() string { return "callctx.Ctx" }

// AfterFunc arranges for f to run once c is done: on the goroutine that ends
// it or, if it already is done, on a goroutine of its own (the context
// package calls AfterFunc holding a lock that f takes). stop
// unregisters f, reporting whether it did so before f ran. The context package
// calls it to tie a context derived from c to c (and context.AfterFunc(c, g)
// runs g on a goroutine of its own, as for any context); f must be quick and
// must not block.
func (c *Ctx) AfterFunc(f func()) (stop func() bool) {
	c.watch()
	c.mu.Lock()
	if c.ended.Load() {
		c.mu.Unlock()
		go f()
		return func() bool { return false }
	}
	c.nextID++
	id := c.nextID
	if c.fn.f == nil {
		c.fn = afterFunc{id: id, f: f}
	} else {
		c.extra().fns = append(c.extra().fns, afterFunc{id: id, f: f})
	}
	c.mu.Unlock()
	return func() bool { return c.unregister(id) }
}

// unregister removes the function numbered id, reporting whether it was still
// there.
func (c *Ctx) unregister(id uint64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fn.id == id && c.fn.f != nil {
		c.fn = afterFunc{}
		return true
	}
	if c.more == nil {
		return false
	}
	for i, a := range c.more.fns {
		if a.id == id {
			c.more.fns = append(c.more.fns[:i], c.more.fns[i+1:]...)
			return true
		}
	}
	return false
}

// watch makes c hear of its parent's ending from now on: a parent of ours
// registers c as a kid; any other cancelable parent gets a context.AfterFunc.
// A parent already done ends c at once.
func (c *Ctx) watch() {
	if c.watched.Load() {
		return
	}
	c.mu.Lock()
	if c.watching {
		c.mu.Unlock()
		return
	}
	c.watching = true
	c.mu.Unlock()
	switch {
	case c.up != nil:
		c.up.adopt(c)
	case c.parent.Done() != nil:
		unwatch := context.AfterFunc(c.parent, c.fromParent)
		c.mu.Lock()
		c.unwatch = unwatch
		ended := c.ended.Load()
		c.mu.Unlock()
		if ended {
			unwatch()
		} else if err := c.parent.Err(); err != nil { // AfterFunc runs late, on a goroutine of its own
			c.end(err, nil, false)
		}
	}
	c.watched.Store(true)
}

// fromParent ends c because its parent (not one of ours) ended.
func (c *Ctx) fromParent() { c.end(c.parent.Err(), nil, false) }

// adopt registers k, a layer of ours below c, so that c's ending ends k; if c
// has ended already, it ends k now.
func (c *Ctx) adopt(k *Ctx) {
	c.watch()
	c.mu.Lock()
	if c.ended.Load() {
		err := c.err
		c.mu.Unlock()
		k.end(err, nil, false)
		return
	}
	if c.kid == nil {
		c.kid = k
	} else {
		c.extra().kids = append(c.extra().kids, k)
	}
	c.mu.Unlock()
}

// disown removes k from c's kids, once k has ended on its own.
func (c *Ctx) disown(k *Ctx) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.kid == k {
		c.kid = nil
		return
	}
	if c.more == nil {
		return
	}
	for i, o := range c.more.kids {
		if o == k {
			c.more.kids = append(c.more.kids[:i], c.more.kids[i+1:]...)
			return
		}
	}
}

// end ends c with err and cause, if it has not ended: self says whether c
// ended on its own (Cancel, Expire) rather than by its parent, whose cause
// is then c's. It closes Done, ends the kids, runs the AfterFunc functions,
// and leaves the parent and the schedule.
func (c *Ctx) end(err, cause error, self bool) {
	if c.ended.Load() {
		return
	}
	if self && !c.watched.Load() {
		// A child of the context package's would already have ended with a
		// parent that is done: so does c.
		if perr := c.parentErr(); perr != nil {
			err, cause, self = perr, nil, false
		}
	}
	if cause == nil {
		cause = err
	}
	c.mu.Lock()
	if c.ended.Load() {
		c.mu.Unlock()
		return
	}
	c.err, c.cause, c.self = err, cause, self
	c.ended.Store(true)
	if d, ok := c.done.Load().(chan struct{}); ok {
		close(d)
	} else {
		c.done.Store(closed)
	}
	kid, fn, unwatch := c.kid, c.fn, c.unwatch
	var kids []*Ctx
	var fns []afterFunc
	if c.more != nil {
		kids, fns = c.more.kids, c.more.fns
		c.more.kids, c.more.fns = nil, nil
	}
	c.kid, c.fn, c.unwatch = nil, afterFunc{}, nil
	c.mu.Unlock()

	if unwatch != nil {
		unwatch()
	}
	if self && c.up != nil && c.watched.Load() {
		c.up.disown(c)
	}
	if c.at.sched != nil {
		c.at.sched.Remove(&c.at)
	}
	if kid != nil {
		kid.end(err, nil, false)
	}
	for _, k := range kids {
		k.end(err, nil, false)
	}
	if fn.f != nil {
		fn.f()
	}
	for _, a := range fns {
		a.f()
	}
}

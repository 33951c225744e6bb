package hedge

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// copyContext is the context of one copy of a hedged attempt: its parent's
// context, which the stage can cancel on its own when the copy loses.
//
// A copy that wins is canceled only once the call is over, and much work never
// asks for its context's Done channel (it checks Err, or calls nothing that
// waits). So the cancellable context a copy needs, a context.WithCancel of the
// parent, is made only when something needs it: the work asks for Done, or
// asks anything at all once the copy is canceled. Until then the copy answers
// with its parent's Deadline, Err and Values, which are what a child that was
// never canceled answers; from then on every method is the real child's, so
// context.Cause, context.AfterFunc and contexts derived from the copy behave as
// for any WithCancel child. Work that asks for Done pays what WithCancel costs,
// as it would without the laziness.
type copyContext struct {
	parent   context.Context
	real     atomic.Pointer[realContext] // nil until needed
	canceled atomic.Bool                 // canceled while real was nil
	mu       sync.Mutex                  // serializes making real
}

// realContext is the cancellable child a copyContext stands for.
type realContext struct {
	ctx    context.Context
	cancel context.CancelFunc
}

func newCopyContext(parent context.Context) *copyContext {
	return &copyContext{parent: parent}
}

// make returns the real child, making it on first use.
func (c *copyContext) make() *realContext {
	if r := c.real.Load(); r != nil {
		return r
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if r := c.real.Load(); r != nil {
		return r
	}
	ctx, cancel := context.WithCancel(c.parent)
	if c.canceled.Load() {
		cancel()
	}
	r := &realContext{ctx: ctx, cancel: cancel}
	c.real.Store(r)
	return r
}

// cancel cancels the copy, as its CancelFunc would. A copy nobody has asked
// for Done is only marked: the real child is made, canceled, if anybody asks
// later. A copy whose parent is already done is left to follow its parent, as
// a child canceled by its parent first would.
func (c *copyContext) cancel() {
	c.mu.Lock()
	r := c.real.Load()
	if r == nil && c.parent.Err() == nil {
		c.canceled.Store(true)
	}
	c.mu.Unlock()
	if r != nil {
		r.cancel()
	}
}

// settled reports whether the copy's methods must be the real child's: it has
// one, or it was canceled.
func (c *copyContext) settled() (*realContext, bool) {
	if r := c.real.Load(); r != nil {
		return r, true
	}
	if c.canceled.Load() {
		return c.make(), true
	}
	return nil, false
}

// Deadline is the parent's, as a child's is.
func (c *copyContext) Deadline() (time.Time, bool) { return c.parent.Deadline() }

// Done makes the real child, and returns its channel.
func (c *copyContext) Done() <-chan struct{} { return c.make().ctx.Done() }

// Err is the real child's or, while the copy has none and is not canceled, the
// parent's.
func (c *copyContext) Err() error {
	if r, ok := c.settled(); ok {
		return r.ctx.Err()
	}
	return c.parent.Err()
}

// Value is the real child's or, while the copy has none and is not canceled,
// the parent's.
func (c *copyContext) Value(key any) any {
	if r, ok := c.settled(); ok {
		return r.ctx.Value(key)
	}
	return c.parent.Value(key)
}

// String names the context, for debugging.
func (c *copyContext) String() string { return "hedge.copyContext" }

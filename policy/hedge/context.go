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
	parent context.Context
	n      int // the copy's number: 0 for the attempt itself, 1, 2, ... for its hedges
	// real and cancelReal are the real child, written once under mu before
	// made is set; whoever reads made as true may read them without mu.
	real       context.Context
	cancelReal context.CancelFunc
	made       atomic.Bool
	canceled   atomic.Bool // canceled before the real child was made
	mu         sync.Mutex  // serializes making the real child, and cancel
}

func newCopyContext(parent context.Context, n int) *copyContext {
	return &copyContext{parent: parent, n: n}
}

// child returns the real child, making it on first use.
func (c *copyContext) child() context.Context {
	if c.made.Load() {
		return c.real
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.made.Load() {
		c.real, c.cancelReal = context.WithCancel(c.parent)
		if c.canceled.Load() {
			c.cancelReal()
		}
		c.made.Store(true)
	}
	return c.real
}

// cancel cancels the copy, as its CancelFunc would. A copy whose real child
// nobody has needed is only marked: the child is made, canceled, if anybody
// asks later. A copy whose parent is already done is left to follow its
// parent, as a child canceled by its parent first would.
func (c *copyContext) cancel() {
	c.mu.Lock()
	made := c.made.Load()
	if !made && c.parent.Err() == nil {
		c.canceled.Store(true)
	}
	c.mu.Unlock()
	if made {
		c.cancelReal()
	}
}

// settled returns the real child if the copy's methods must be its: it has
// been made, or the copy was canceled. It returns nil otherwise.
func (c *copyContext) settled() context.Context {
	if c.made.Load() || c.canceled.Load() {
		return c.child()
	}
	return nil
}

// Deadline is the parent's, as a child's is.
func (c *copyContext) Deadline() (time.Time, bool) { return c.parent.Deadline() }

// Done makes the real child, and returns its channel.
func (c *copyContext) Done() <-chan struct{} { return c.child().Done() }

// Err is the real child's or, while the copy has none and is not canceled, the
// parent's.
func (c *copyContext) Err() error {
	if r := c.settled(); r != nil {
		return r.Err()
	}
	return c.parent.Err()
}

// Value is the copy's number for the key of [CopyOf]; otherwise the real
// child's or, while the copy has none and is not canceled, the parent's.
func (c *copyContext) Value(key any) any {
	if key == (copyKey{}) {
		return c.n // a small int: boxing it allocates nothing
	}
	if r := c.settled(); r != nil {
		return r.Value(key)
	}
	return c.parent.Value(key)
}

// String names the context, for debugging.
func (c *copyContext) String() string { return "hedge.copyContext" }

package timeout

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/resilience-go/pipeline"
)

// call runs the rest of one pipeline call on its own goroutine. Calls are pooled
// per stage; ownership passes from the caller to the goroutine and back through
// state, so exactly one side returns a call to the pool.
type call[T any] struct {
	policy *Policy[T]
	run    func() // c.work, bound once so that starting a goroutine allocates nothing
	done   chan struct{}
	state  atomic.Uint32

	// Set by the caller before the goroutine starts.
	ctx  context.Context
	next pipeline.Next[T]
	// Set by the goroutine before it signals done or, if abandoned, exits.
	result   pipeline.Result[T]
	panicked *pipeline.PanicError
	// Set by the caller before abandoning; read by the goroutine afterwards.
	abandonedAt time.Time
}

const (
	running uint32 = iota
	finished
	abandoned
)

func newCall[T any](p *Policy[T]) *call[T] {
	c := &call[T]{policy: p, done: make(chan struct{}, 1)}
	c.run = c.work
	return c
}

// start launches the goroutine that runs next with ctx.
func (c *call[T]) start(ctx context.Context, next pipeline.Next[T]) {
	c.ctx, c.next = ctx, next
	c.state.Store(running)
	go c.run()
}

// work is the goroutine's body. It records the result, or the panic, and hands
// the call back: to the waiting caller, or to the pool if the caller has left.
func (c *call[T]) work() {
	defer func() {
		if v := recover(); v != nil {
			c.panicked = pipeline.NewPanicError(v)
		}
		if c.state.CompareAndSwap(running, finished) {
			c.done <- struct{}{}
			return
		}
		c.late()
	}()
	c.result = c.next.Run(c.ctx)
}

// late ends a goroutine whose caller abandoned it: it reports the late return,
// raises a panic again rather than swallow it, and returns the call to the pool.
func (c *call[T]) late() {
	p, next, panicked := c.policy, c.next, c.panicked
	if next.Observed() {
		next.Emit(LateReturn{Timeout: p.timeout, After: time.Since(c.abandonedAt)})
	}
	c.reset()
	p.calls.Put(c)
	if panicked != nil {
		panic(panicked)
	}
}

// abandon gives the call to its goroutine, unless the goroutine finished first;
// it reports whether it did.
func (c *call[T]) abandon() bool {
	c.abandonedAt = time.Now()
	return c.state.CompareAndSwap(running, abandoned)
}

// collect takes the finished goroutine's result, returns the call to the pool and
// raises the goroutine's panic, if any, on the caller's goroutine.
func (c *call[T]) collect() pipeline.Result[T] {
	r, panicked := c.result, c.panicked
	c.reset()
	c.policy.calls.Put(c)
	if panicked != nil {
		panic(panicked)
	}
	return r
}

// reset drops every reference the call holds, so a pooled call retains nothing.
func (c *call[T]) reset() {
	c.ctx, c.next, c.result, c.panicked = nil, pipeline.Next[T]{}, pipeline.Result[T]{}, nil
	c.abandonedAt = time.Time{}
}

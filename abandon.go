package pipeline

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// ErrAbandoned is matched, with errors.Is, by the error of an attempt whose work
// ignored its context past the grace a timeout stage gave it (see
// [Next.AbandonAfter]). The same error also matches the context's error and its
// cause.
var ErrAbandoned = errors.New("pipeline: work abandoned: it did not return after its context was done")

// abandonedError is the result of abandoned work.
type abandonedError struct {
	ctxErr, cause error
}

func (e *abandonedError) Error() string {
	return ErrAbandoned.Error() + ": " + e.cause.Error()
}

func (e *abandonedError) Unwrap() []error { return []error{ErrAbandoned, e.ctxErr, e.cause} }

// detached runs the caller's work for one attempt on a goroutine of its own.
// They are pooled per pipeline; ownership passes from the caller to the
// goroutine and back through state, so exactly one side returns a detached to the
// pool. A detached holds no channel: channels are made per attempt, so that they
// belong to the caller's testing/synctest bubble, if any.
type detached[T any] struct {
	pool  *sync.Pool
	run   func() // g.work, bound once so that starting the goroutine allocates nothing
	state atomic.Uint32

	// Set by the caller before the goroutine starts.
	ctx     context.Context
	fn      Func[T]
	done    chan struct{}
	p       *Pipeline[T] // for the late return's event and release
	attempt int
	// Set by the goroutine before it closes done or, if abandoned, exits.
	value    T
	err      error
	panicked *PanicError
	// Set by the caller before abandoning; read by the goroutine afterwards.
	abandonedAt time.Time
}

// A detached's states. The caller moves it from waiting or running to abandoned;
// the goroutine from waiting to running, and from running to finished. Whoever
// loses a race for a state change learns from it who owns the detached now.
const (
	waiting   uint32 = iota // the goroutine has not started the work
	running                 // the work has started
	finished                // the work has returned; the caller collects it
	abandoned               // the caller has left; the goroutine recycles the detached
)

func newDetached[T any](pool *sync.Pool) *detached[T] {
	g := &detached[T]{pool: pool}
	g.run = g.work
	return g
}

// runDetached is attempt for work run under Next.AbandonAfter: it waits for the work,
// and once ctx is done at most grace more, then abandons it.
func (p *Pipeline[T]) runDetached(ctx context.Context, fn Func[T], attempt int, grace time.Duration) Result[T] {
	var start time.Duration
	if p.timed() {
		start = p.now()
	}
	g := p.detached.Get().(*detached[T])
	done := make(chan struct{})
	g.ctx, g.fn, g.done, g.p, g.attempt = ctx, fn, done, p, attempt
	g.state.Store(waiting)
	go g.run()

	select {
	case <-done:
		return p.finishDetached(ctx, g, start, attempt)
	case <-ctx.Done():
	}
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case <-done:
		return p.finishDetached(ctx, g, start, attempt)
	case <-timer.C:
	}
	g.abandonedAt = time.Now()
	if !g.state.CompareAndSwap(waiting, abandoned) && !g.state.CompareAndSwap(running, abandoned) {
		<-done // the work returned in the instant between the grace and now
		return p.finishDetached(ctx, g, start, attempt)
	}
	if p.onEvent != nil {
		p.onEvent(ctx, p.own(), Abandoned{Attempt: attempt, Grace: grace})
	}
	var zero T
	return p.result(ctx, zero, &abandonedError{ctxErr: ctx.Err(), cause: context.Cause(ctx)}, attempt, start)
}

// finishDetached collects the work's result from g, returns g to the pool, and
// classifies and reports the result. A panic in the work is raised again here,
// on the caller's goroutine.
func (p *Pipeline[T]) finishDetached(ctx context.Context, g *detached[T], start time.Duration, attempt int) Result[T] {
	v, err, panicked := g.value, g.err, g.panicked
	g.recycle()
	if panicked != nil {
		panic(panicked)
	}
	return p.result(ctx, v, err, attempt, start)
}

// work is the goroutine's body. It starts the work unless the caller has
// already left (then the work never starts: a call that returned must not
// send its request after all), records the result, the panic or a
// runtime.Goexit, and hands the detached back: to the waiting caller, or to the
// pool if the caller has left.
func (g *detached[T]) work() {
	if !g.state.CompareAndSwap(waiting, running) {
		g.recycle()
		return
	}
	returned := false
	defer func() {
		if !returned {
			g.panicked = recovered(recover())
		}
		if g.state.CompareAndSwap(running, finished) {
			close(g.done)
			return
		}
		g.late()
	}()
	g.value, g.err = g.fn(g.ctx)
	returned = true
}

// late ends a goroutine whose caller abandoned it: it releases the value the
// work returned, which nobody will read, reports the late return, returns the
// detached to the pool, and raises a panic of the work's again rather than
// swallow it. A panic in the Release or event hook is contained and logged:
// nobody is left to receive it, and a hook must not end the program from a
// goroutine the library owns.
func (g *detached[T]) late() {
	p, ctx, v, panicked, attempt := g.p, g.ctx, g.value, g.panicked, g.attempt
	after := time.Since(g.abandonedAt)
	g.recycle()
	contain("Release", func() { p.discard(v) })
	if p.onEvent != nil {
		contain("OnEvent", func() { p.onEvent(ctx, p.own(), LateReturn{Attempt: attempt, After: after}) })
	}
	if panicked != nil && panicked.Value != ErrGoexit {
		panic(panicked)
	}
}

// recycle drops every reference the detached holds and returns it to its pool.
func (g *detached[T]) recycle() {
	var zero T
	g.ctx, g.fn, g.done, g.p = nil, nil, nil, nil
	g.value, g.err, g.panicked, g.abandonedAt = zero, nil, nil, time.Time{}
	g.pool.Put(g)
}

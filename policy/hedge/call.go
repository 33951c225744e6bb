package hedge

import (
	"context"
	"runtime/debug"
	"sync"
	"time"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/criticality"
	"github.com/resilience-go/pipeline/internal/callctx"
	"github.com/resilience-go/pipeline/internal/hedgerule"
	"github.com/resilience-go/pipeline/internal/kind"
	"github.com/resilience-go/pipeline/outcome"
)

// call is one hedged attempt: its first copy, run on the caller's goroutine, and
// the hedges the stage's schedule sends, each on a goroutine of its own. Calls
// are pooled per stage. The caller owns its call: before it returns the call to
// the pool it waits until every copy has finished and no hedge is due, so
// nothing touches a call once it is back in the pool. A call holds no channel,
// so that it can serve callers in different testing/synctest bubbles.
type call[T any] struct {
	p  *Policy[T]
	at callctx.Entry // its place on the stage's schedule, when a hedge is due

	// mu guards every field below; cond is signalled when a copy finishes or a
	// due hedge has been dealt with. Nothing holds mu while the caller's code
	// runs.
	mu      sync.Mutex
	cond    sync.Cond
	ctx     context.Context // the caller's; every copy's context derives from it
	next    pipeline.Next[T]
	delay   time.Duration
	copies  []hedgeCopy[T]
	running int  // copies started and not finished
	pending int  // hedges scheduled or due that Due has not dealt with (0 or 1)
	winner  int  // index of the winning copy, or -1
	last    int  // index of the copy that finished last
	closed  bool // the caller has stopped waiting: no more hedges
	// hookPanic is a panic of the event hook on the schedule's goroutine or a
	// hedge's, raised again on the caller's.
	hookPanic *pipeline.PanicError
}

// hedgeCopy is one copy of the attempt.
type hedgeCopy[T any] struct {
	ctx      *callctx.Ctx
	start    time.Duration // on the estimator's clock
	result   pipeline.Result[T]
	panicked *pipeline.PanicError
	done     bool
	measured bool // its duration has been recorded
}

func newCall[T any](p *Policy[T]) *call[T] {
	c := &call[T]{p: p}
	c.cond.L = &c.mu
	return c
}

// hedged runs one attempt that may be hedged after delay; at is when it
// started (pipeline.Next.Entered), start the same on the estimator's clock.
// The first copy runs at once, with at handed on; the hedges run later, and
// read the clock as they start.
func (p *Policy[T]) hedged(ctx context.Context, next pipeline.Next[T], at, start, delay time.Duration) pipeline.Result[T] {
	c := p.calls.Get().(*call[T])
	first := c.copyContext(ctx, next, 0)
	var now time.Time
	if next.SharesClock(p.clock) {
		now = p.sched.At(at)
	} else {
		now = p.sched.Now()
	}
	c.mu.Lock()
	c.ctx, c.next, c.delay = ctx, next, delay
	c.copies = append(c.copies, hedgeCopy[T]{ctx: first, start: start})
	c.running, c.pending, c.winner = 1, 1, -1
	p.sched.Add(&c.at, c, now, now.Add(delay))
	c.mu.Unlock()

	returned := false
	defer func() {
		if !returned { // the first copy panicked: clean up, and let the panic go on
			c.finish(pipeline.Result[T]{Verdict: outcome.Verdict{Kind: outcome.Transient}}, p.est.Now(), false)
		}
	}()
	r := next.At(at).Run(first)
	returned = true
	return c.finish(r, p.returned(next, first), true)
}

// copyContext makes the context of copy k, a child of ctx. If the stage
// inside is a timeout (kind.Timeout: an attempt timeout, as in the standard
// preset), the context is lent to it (see callctx.Ctx.Lend): a stage of that
// kind promises to set its deadline on it rather than derive another, so
// that a copy costs one context, not two. Any other stage inside may run the rest more than once with the same
// context (a retry does), where one attempt's deadline must not end the next
// one's: its copies get a context of their own.
func (c *call[T]) copyContext(ctx context.Context, next pipeline.Next[T], k int) *callctx.Ctx {
	cp := callctx.WithCancel(ctx, copyKey{}, k)
	if next.Inner().Kind == kind.Timeout {
		cp.Lend()
	}
	return cp
}

// finish settles the first copy with r, waits for a winner or for every copy to
// fail, stops the rest, and returns the result the call keeps. When keep is false
// the caller is unwinding from a panic: it waits for no winner and keeps
// nothing.
func (c *call[T]) finish(r pipeline.Result[T], end time.Duration, keep bool) pipeline.Result[T] {
	c.mu.Lock()
	c.settle(0, r, nil, end)
	for keep && c.winner < 0 && c.running > 0 {
		c.cond.Wait()
	}
	c.closed = true
	if c.pending > 0 && c.p.sched.Remove(&c.at) {
		c.pending--
	}
	c.cancelRunning()
	for c.running > 0 || c.pending > 0 {
		c.cond.Wait()
	}
	c.mu.Unlock()
	return c.collect(keep)
}

// settle records that copy k finished with r (or panicked), at end on the
// estimator's clock. The first acceptable result wins and cancels the other
// copies. Call it with mu held.
func (c *call[T]) settle(k int, r pipeline.Result[T], panicked *pipeline.PanicError, end time.Duration) {
	a := &c.copies[k]
	a.result, a.panicked, a.done = r, panicked, true
	c.running--
	c.last = k
	if r.Verdict.Kind == outcome.OK && panicked == nil && !a.measured {
		a.measured = true
		c.p.est.Record(end, end-a.start)
	}
	if k > 0 && r.Verdict.SelfImposed {
		c.p.budget.Refund() // an inner stage refused the hedge: it never reached the dependency
	}
	if panicked != nil { // the call will panic: no copy need go on
		c.cancelRunning()
	}
	if c.winner < 0 && panicked == nil && hedgerule.Acceptable(r.Verdict) {
		c.winner = k
		if first := &c.copies[0]; k > 0 && !first.done && !first.measured {
			// The first copy was overtaken: it is still running. It takes at
			// least this long, longer than the hedge delay: recording that keeps
			// the samples above the delay, and so the quantile, what they would
			// be without hedging. (A first copy that failed is no sample.)
			first.measured = true
			c.p.est.Record(end, end-first.start)
		}
		c.cancelRunning()
	}
	c.cond.Broadcast()
}

// cancelRunning cancels every copy that has not finished. Call it with mu held.
func (c *call[T]) cancelRunning() {
	for i := range c.copies {
		if !c.copies[i].done {
			c.copies[i].ctx.Cancel()
		}
	}
}

// Due is called by the stage's schedule when a hedge is due: it sends the
// hedge, if one may still be sent, on a goroutine of its own. The hedge counts
// as pending until Due has done with c, event included, so that the caller
// does not return c to the pool under it.
func (c *call[T]) Due() {
	c.mu.Lock()
	if c.closed || c.winner >= 0 {
		c.pending--
		c.cond.Broadcast()
		c.mu.Unlock()
		return
	}
	next, delay, k := c.next, c.delay, len(c.copies)
	if why := c.p.rule.Permit(criticality.From(c.ctx)); why != "" {
		c.mu.Unlock()
		c.skipped(c.ctx, next, why)
		return
	}
	ctx := c.copyContext(c.ctx, next, k)
	c.copies = append(c.copies, hedgeCopy[T]{ctx: ctx, start: c.p.est.Now()})
	c.running++
	c.pending--
	if k+1 < c.p.maxAttempts {
		c.pending++
		now := c.p.sched.Now()
		c.p.sched.Add(&c.at, c, now, now.Add(delay))
	}
	c.mu.Unlock()
	go c.run(k, next, ctx, delay)
}

// skipped ends a due hedge that was not sent, reporting why. A panic
// (or runtime.Goexit) of the event hook is kept for the caller to raise.
func (c *call[T]) skipped(ctx context.Context, next pipeline.Next[T], why string) {
	returned := false
	defer func() {
		var panicked *pipeline.PanicError
		if !returned {
			panicked = recovered(recover())
		}
		c.mu.Lock()
		c.pending--
		if panicked != nil && c.hookPanic == nil {
			c.hookPanic = panicked
			c.cancelRunning()
		}
		c.cond.Broadcast()
		c.mu.Unlock()
	}()
	if next.Observed() {
		next.Emit(ctx, Skipped{Attempt: next.Attempt(), Why: why})
	}
	returned = true
}

// recovered is the panic to raise again on the caller's goroutine for what a
// deferred function recovered in a function that did not return: v, or
// pipeline.ErrGoexit for runtime.Goexit.
func recovered(v any) *pipeline.PanicError {
	if v == nil {
		v = pipeline.ErrGoexit
	}
	if pe, ok := v.(*pipeline.PanicError); ok {
		return pe
	}
	return &pipeline.PanicError{Value: v, Stack: debug.Stack()}
}

// run reports hedge k, sent after delay, runs it and settles it, however it
// ends; a panic of the event hook is the copy's.
func (c *call[T]) run(k int, next pipeline.Next[T], ctx *callctx.Ctx, delay time.Duration) {
	var r pipeline.Result[T]
	returned := false
	defer func() {
		var panicked *pipeline.PanicError
		if !returned {
			panicked = recovered(recover())
		}
		end := c.p.returned(next, ctx)
		c.mu.Lock()
		c.settle(k, r, panicked, end)
		c.mu.Unlock()
	}()
	if next.Observed() {
		next.Emit(ctx, Hedged{Attempt: next.Attempt(), Hedge: k, Delay: delay})
	}
	r = next.Run(ctx)
	returned = true
}

// collect ends a call whose copies have all finished: it releases every result
// but the one it returns, whose context lives on until its value is released
// (see [pipeline.Next.Hold]), returns the call to the pool, and raises again
// the first panic of any copy. When keep is false it releases them all.
func (c *call[T]) collect(keep bool) pipeline.Result[T] {
	kept := c.winner
	if kept < 0 {
		kept = c.last
	}
	r, end := c.copies[kept].result, c.copies[kept].ctx
	won := 0 // the hedge that won, if one did
	if !keep {
		kept = -1
	} else if c.winner > 0 {
		won = c.winner
	}
	ctx, next, panicked := c.ctx, c.next, c.hookPanic
	for i := range c.copies {
		cp := &c.copies[i]
		if panicked == nil {
			panicked = cp.panicked
		}
		if i != kept {
			// Release before cancel: a loser that had finished can still
			// drain what it holds (a body, so its connection is reused).
			if cp.panicked == nil {
				if p := discard(next, cp.result); panicked == nil {
					panicked = p
				}
			}
			cp.ctx.Cancel()
		}
	}
	clear(c.copies)
	c.copies = c.copies[:0]
	c.ctx, c.next, c.closed, c.hookPanic = nil, pipeline.Next[T]{}, false, nil
	c.p.calls.Put(c)
	if !keep {
		return r
	}
	if panicked != nil { // nothing is returned: the kept copy goes too
		end.Cancel()
		next.Discard(r)
		panic(panicked)
	}
	if won > 0 && next.Observed() {
		emitWon(ctx, next, won, r, end)
	}
	if !next.Holds() {
		end.Cancel()
		return r
	}
	return next.Hold(r, end.Cancel)
}

// emitWon reports that hedge number k won, with the result r it returns. If
// the hook panics, r is not returned: its value is released and its copy
// cancelled before the panic goes on.
func emitWon[T any](ctx context.Context, next pipeline.Next[T], k int, r pipeline.Result[T], end *callctx.Ctx) {
	returned := false
	defer func() {
		if !returned {
			end.Cancel()
			next.Discard(r)
		}
	}()
	next.Emit(ctx, Won{Attempt: next.Attempt(), Hedge: k})
	returned = true
}

// discard releases r's value and returns a panic of the Release hook rather
// than raise it, so that one failing release does not leave the other losers
// unreleased.
func discard[T any](next pipeline.Next[T], r pipeline.Result[T]) (panicked *pipeline.PanicError) {
	returned := false
	defer func() {
		if !returned {
			panicked = recovered(recover())
		}
	}()
	next.Discard(r)
	returned = true
	return nil
}

package pipelinetest

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/resilience-go/pipeline"
)

// saturation is how many calls ReturnsPromptlyWhenSaturated runs at once:
// more than a stage that limits concurrency (a bulkhead, a pool) admits.
const saturation = 64

// promptly is how long, on the bubble's clock, a canceled call of
// ReturnsPromptlyWhenSaturated may take to return. A conforming stage needs
// no time at all.
const promptly = 10 * time.Millisecond

// returnsPromptlyWhenSaturated runs many calls at once, each with its own
// context, whose work blocks until that context is done. Once every call is
// either in the work or waiting in the stage, it cancels the calls that are
// waiting in the stage, then the others; each must return promptly, with an
// error matching context.Canceled. Calls the stage refused at once (a
// bulkhead without a queue, a rate limiter) are left out. Canceling the calls in the work first would
// free whatever they hold, and hide a stage that waits for it without
// watching its context.
func (c *check[T]) returnsPromptlyWhenSaturated() {
	t := c.t
	p := c.pipeline()
	var zero T
	calls := make([]*call[T], saturation)
	cancels := make([]context.CancelFunc, saturation)
	for i := range calls {
		ctx, cancel := context.WithCancel(c.ctx)
		cancels[i] = cancel
		calls[i] = start(p, ctx, func(ctx context.Context) (T, error) { return zero, c.wait(ctx) })
	}
	defer func() {
		if n := finish(calls, cancels); n > 0 {
			t.Errorf("%d of %d calls did not return within %v once canceled", n, saturation, patience)
		}
	}()
	if settle() != nil {
		if lockedStacks() != nil {
			t.Log("calls wait for a lock held by a call inside the work; NoLockAcrossNext reports that")
		} else {
			t.Log("goroutines wait on something the bubble does not own, so virtual time cannot pass; the check is skipped")
		}
		return
	}

	var waiting, working []int
	refused := make(map[int]bool) // calls the stage refused before any was canceled
	for i, cl := range calls {
		switch {
		case closed(cl.returned):
			refused[i] = isRefusal(cl.err)
		case closed(cl.entered):
			working = append(working, i)
		default:
			waiting = append(waiting, i)
		}
	}
	if late := cancelAndAwait(calls, cancels, waiting); late > 0 {
		t.Errorf("of %d calls at once, %d reached the work and %d waited in the stage; once canceled, %d of "+
			"those waiting did not return within %v: a stage that waits for a permit or a slot must also "+
			"watch ctx.Done() and give up then, with pipeline.Interrupted(ctx, stage)",
			saturation, len(working), len(waiting), late, promptly)
		return
	}
	if late := cancelAndAwait(calls, cancels, working); late > 0 {
		t.Errorf("%d of the %d calls in the work did not return within %v once canceled", late, len(working), promptly)
		return
	}
	for i, cl := range calls {
		if !refused[i] && !errors.Is(cl.err, context.Canceled) {
			t.Errorf("call %d of %d, canceled, returned %v; want an error matching context.Canceled "+
				"(or, before it was canceled, a refusal of the stage's own)", i+1, saturation, cl.err)
			return
		}
	}
}

// isRefusal reports whether err is a stage's refusal of its own: a
// *pipeline.StopError saying that a limit, a breaker or a budget turned the
// call away. A stage that limits may refuse some of many calls at once rather
// than let them wait.
func isRefusal(err error) bool {
	stop, ok := errors.AsType[*pipeline.StopError](err)
	if !ok {
		return false
	}
	switch stop.Reason {
	case pipeline.DependencyUnavailable, pipeline.BudgetExhausted, pipeline.RateLimited, pipeline.ConcurrencyLimited:
		return true
	}
	return false
}

// cancelAndAwait cancels the calls numbered in which and waits, at most
// promptly on the bubble's clock, for them to return. It returns how many did
// not.
func cancelAndAwait[T any](calls []*call[T], cancels []context.CancelFunc, which []int) (late int) {
	for _, i := range which {
		cancels[i]()
	}
	deadline := time.Now().Add(promptly)
	for _, i := range which {
		if !calls[i].await(time.Until(deadline)) {
			late++
		}
	}
	return late
}

// finish cancels every call and waits for them to return: at most patience
// on the bubble's clock, and not at all once a goroutine waits on something
// the bubble does not own, such as a lock, for time cannot pass then. It
// returns how many calls are still running.
func finish[T any](calls []*call[T], cancels []context.CancelFunc) (running int) {
	for _, cancel := range cancels {
		cancel()
	}
	deadline := time.Now().Add(patience)
	for _, cl := range calls {
		if !closed(cl.returned) && settle() == nil {
			cl.await(time.Until(deadline))
		}
		if !closed(cl.returned) {
			running++
		}
	}
	return running
}

// noLockAcrossNext runs two calls at once; the first one's work blocks until
// the second one's work has started. A stage that holds a lock while it runs
// next.Run keeps the second call out of the work for good.
func (c *check[T]) noLockAcrossNext() {
	t := c.t
	p := c.pipeline()
	ctx, cancel := context.WithCancel(c.ctx)
	var zero T
	inside := make(chan struct{}) // closed when the second call's work runs
	var once sync.Once
	first := start(p, ctx, func(ctx context.Context) (T, error) {
		select {
		case <-inside:
			return c.Value, nil
		case <-ctx.Done():
			return zero, ctx.Err()
		case <-c.release:
			return zero, errReleased
		}
	})
	calls := []*call[T]{first}
	defer func() {
		if n := finish(calls, []context.CancelFunc{cancel}); n > 0 {
			t.Errorf("%d of %d calls did not return within %v once canceled", n, len(calls), patience)
		}
	}()
	if !first.reachedWork(t, "the first of two calls") {
		return
	}
	second := start(p, ctx, func(context.Context) (T, error) {
		once.Do(func() { close(inside) })
		return c.Value, nil
	})
	calls = append(calls, second)

	// Let virtual time pass, in doubling steps, for a stage that acts on it.
	step, deadline := time.Millisecond, time.Now().Add(patience)
	for {
		stuck := settle()
		switch {
		case closed(inside), closed(second.returned):
			return // the second call ran its work, or the stage refused it: no lock kept it out
		case stuck != nil:
			if locked := lockedStacks(); locked != nil {
				t.Errorf("the stage holds a lock across next.Run: a second call could not reach the work "+
					"while the first was inside it; the goroutines waiting for the lock:\n%s", locked)
			} else {
				t.Logf("goroutines wait on something the bubble does not own, so virtual time cannot pass; the check is skipped:\n%s", stuck)
			}
			return
		case !time.Now().Before(deadline):
			// Not a lock: a stage that admits one call at a time (a bulkhead
			// of one) may keep the second waiting, and ReturnsPromptlyWhenSaturated
			// holds that wait to the call's context.
			t.Logf("a second call did not reach the work within %v while the first was inside it", patience)
			return
		}
		time.Sleep(step)
		step *= 2
	}
}

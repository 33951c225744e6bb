package pipelinetest

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/outcome"
)

// Every work function of the suite is safe for concurrent calls: a stage may
// run next.Run several times at once (a hedge does).

type ctxKey struct{}

var errWork = errors.New("pipelinetest: the work failed")

// slowWork is how long the work of PassesValueOfSlowWork takes, and how long
// the caller of ReturnsPromptlyWhenCanceled waits before canceling: long
// enough for a stage that acts on time, such as a hedge, to act.
const slowWork = 5 * time.Millisecond

func (c *check[T]) passesValue() {
	t := c.t
	var calls atomic.Int32
	got, err := c.pipeline().Execute(c.ctx, func(context.Context) (T, error) {
		calls.Add(1)
		return c.Value, nil
	})
	if err != nil || got != c.Value {
		t.Fatalf("Execute = (%v, %v), want (%v, nil)", got, err, c.Value)
	}
	if n := calls.Load(); n < 1 {
		t.Fatalf("the work ran %d times, want at least once", n)
	}
}

// passesValueOfSlowWork is passesValue for work that takes virtual time, so
// that stages which act on time (a hedge sends a second copy) do.
func (c *check[T]) passesValueOfSlowWork() {
	t := c.t
	began := time.Now()
	got, err := c.pipeline().Execute(c.ctx, func(ctx context.Context) (T, error) {
		if err := c.sleep(ctx, slowWork); err != nil {
			var zero T
			return zero, err
		}
		return c.Value, nil
	})
	if err != nil || got != c.Value {
		t.Fatalf("with work that takes %v, Execute = (%v, %v) after %v, want (%v, nil)", slowWork, got, err, time.Since(began), c.Value)
	}
}

func (c *check[T]) passesError() {
	var zero T
	_, err := c.pipeline().Execute(c.ctx, func(context.Context) (T, error) {
		return zero, outcome.MarkPermanent(errWork)
	})
	if !errors.Is(err, errWork) {
		c.t.Fatalf("Execute returned %v; the work's error must stay reachable with errors.Is", err)
	}
}

// reportsFailures runs the policy inside an outer stage that reads what the
// policy returns to it: when the work fails and the call ends with an error,
// the verdict the stages outside read must not be OK, or a breaker outside
// would count the failure as a success.
func (c *check[T]) reportsFailures() {
	var seen pipeline.Result[T]
	outer := pipeline.PolicyFunc[T](func(ctx context.Context, next pipeline.Next[T]) pipeline.Result[T] {
		seen = next.Run(ctx)
		return seen
	})
	p := pipeline.New(outer, c.NewPolicy())
	var zero T
	_, err := p.Execute(c.ctx, func(context.Context) (T, error) { return zero, outcome.MarkTransient(errWork) })
	if err != nil && seen.Err != nil && seen.Verdict.Kind == outcome.OK {
		c.t.Fatalf("the policy returned the error %v with an OK verdict: the stages outside it read the failure as a success", seen.Err)
	}
}

func (c *check[T]) propagatesContext() {
	t := c.t
	deadline := time.Now().Add(time.Hour)
	ctx, cancel := context.WithDeadline(context.WithValue(c.ctx, ctxKey{}, "marker"), deadline)
	defer cancel()
	var seen atomic.Bool
	_, err := c.pipeline().Execute(ctx, func(ctx context.Context) (T, error) {
		seen.Store(true)
		if got := ctx.Value(ctxKey{}); got != "marker" {
			t.Errorf("the work's context lost the caller's value: got %v", got)
		}
		if d, ok := ctx.Deadline(); !ok || d.After(deadline) {
			t.Errorf("the work's context deadline is %v (set: %v), want at or before the caller's %v", d, ok, deadline)
		}
		return c.Value, nil
	})
	if err != nil || !seen.Load() {
		t.Fatalf("Execute = %v, work ran: %v; want success", err, seen.Load())
	}
}

// returnsPromptlyWhenCanceled runs work that blocks until its context is
// done; the caller cancels a little later, and Execute must then return
// without waiting for time to pass.
func (c *check[T]) returnsPromptlyWhenCanceled() {
	t := c.t
	ctx, cancel := context.WithCancel(c.ctx)
	defer cancel()
	var zero T
	cl := start(c.pipeline(), ctx, func(ctx context.Context) (T, error) { return zero, c.wait(ctx) })
	if !cl.reachedWork(t, "with work that waits for its context") {
		return
	}
	time.Sleep(slowWork) // the caller gives up after a while; stages that act on time do meanwhile
	if closed(cl.returned) {
		t.Errorf("Execute returned (%v, %v) before the caller canceled, while the work was still running", cl.value, cl.err)
		return
	}
	cancel()
	settle() // every goroutine of the bubble has done all it can without time passing
	if !closed(cl.returned) {
		t.Error("Execute did not return once the caller canceled, without waiting for time to pass")
		cl.await(patience) // so that a stage that merely waited is not reported as a leak too
		return
	}
	if !errors.Is(cl.err, context.Canceled) {
		t.Errorf("after cancellation Execute returned %v, want an error matching context.Canceled", cl.err)
	}
}

func (c *check[T]) refusesCanceledContext() {
	t := c.t
	ctx, cancel := context.WithCancel(c.ctx)
	cancel()
	began := time.Now()
	_, err := c.pipeline().Execute(ctx, func(ctx context.Context) (T, error) {
		var zero T
		return zero, ctx.Err()
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("with a canceled context Execute returned %v, want an error matching context.Canceled", err)
	}
	if waited := time.Since(began); waited > 0 {
		t.Fatalf("with a canceled context Execute waited %v before returning", waited)
	}
}

func (c *check[T]) leavesNoGoroutine() {
	p := c.pipeline()
	for _, g := range bubbled() {
		c.known[g.id] = true // a goroutine the policy keeps from its construction on is not a leak of a call
	}
	var zero T
	works := []pipeline.Func[T]{
		func(context.Context) (T, error) { return c.Value, nil },
		func(context.Context) (T, error) { return zero, errWork },
		func(context.Context) (T, error) { return zero, outcome.MarkPermanent(errWork) },
	}
	for _, work := range works {
		_, _ = p.Execute(c.ctx, work)
		if c.noneLeft() {
			return
		}
	}
}

func (c *check[T]) propagatesPanic() {
	t := c.t
	p := c.pipeline()
	type boom struct{}
	func() {
		defer func() {
			v := recover()
			if pe, ok := v.(*pipeline.PanicError); ok {
				v = pe.Value
			}
			if v != (boom{}) {
				t.Fatalf("Execute panicked with %v, want the work's panic value (or a *pipeline.PanicError holding it)", v)
			}
		}()
		_, _ = p.Execute(c.ctx, func(context.Context) (T, error) { panic(boom{}) })
		t.Fatal("Execute returned normally after the work panicked")
	}()
	settle()
	got, err := p.Execute(c.ctx, func(context.Context) (T, error) { return c.Value, nil })
	if err != nil || got != c.Value {
		t.Fatalf("after a panic, Execute = (%v, %v), want (%v, nil): the policy is wedged", got, err, c.Value)
	}
}

func (c *check[T]) concurrentUse() {
	p := c.pipeline()
	const goroutines, calls = 16, 8
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range calls {
				_, err := p.Execute(c.ctx, func(context.Context) (T, error) {
					if (g+i)%4 == 0 {
						var zero T
						return zero, outcome.MarkPermanent(errWork)
					}
					return c.Value, nil
				})
				if err != nil && !errors.Is(err, errWork) && !isRefusal(err) {
					c.t.Errorf("Execute returned %v, want nil, the work's error or a refusal of the stage's own", err)
				}
			}
		})
	}
	wg.Wait()
}

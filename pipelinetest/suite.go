package pipelinetest

import (
	"bytes"
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/outcome"
)

// Run runs the conformance checks against policies built by newPolicy. value is
// what the work returns on success; the checks compare it with what Execute
// returns using ==, so T must be comparable at run time.
func Run[T comparable](t *testing.T, newPolicy func() pipeline.Policy[T], value T) {
	s := suite[T]{newPolicy: newPolicy, value: value}
	for _, check := range []struct {
		name string
		run  func(*testing.T)
	}{
		{"PassesValue", s.passesValue},
		{"PassesError", s.passesError},
		{"PropagatesContext", s.propagatesContext},
		{"ReturnsPromptlyWhenCanceled", s.returnsPromptlyWhenCanceled},
		{"RefusesCanceledContext", s.refusesCanceledContext},
		{"LeavesNoGoroutine", s.leavesNoGoroutine},
		{"PropagatesPanic", s.propagatesPanic},
		{"ConcurrentUse", s.concurrentUse},
	} {
		t.Run(check.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				before, _ := bubble()
				check.run(t)
				noneLeft(t, before)
			})
		})
	}
}

// noneLeft fails t if the bubble has more goroutines than before once every one
// of them has done all it can. A leaked goroutine that is blocked for good also
// makes synctest panic when the check returns; the message comes first.
func noneLeft(t *testing.T, before int) {
	t.Helper()
	synctest.Wait()
	if after, stacks := bubble(); after > before {
		t.Errorf("%d goroutine(s) still running after Execute returned; the bubble's goroutines:\n%s", after-before, stacks)
	}
}

// Goroutines counts the goroutines in the calling goroutine's synctest bubble,
// the caller included. Call it only inside a bubble; after synctest.Wait, a
// difference between two counts is goroutines started and not yet ended.
func Goroutines() int {
	n, _ := bubble()
	return n
}

// bubble counts the goroutines of the calling goroutine's synctest bubble and
// returns their stacks. Counting the whole process instead would see the test
// framework's own goroutines come and go.
func bubble() (int, []byte) {
	buf := make([]byte, 1<<16)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	// The first stack is the caller's; its header names the bubble, as in
	// "goroutine 7 [running, synctest bubble 3]:".
	header, _, _ := bytes.Cut(buf, []byte("\n"))
	i := bytes.Index(header, []byte(", synctest bubble "))
	if i < 0 {
		panic("pipelinetest: Goroutines called outside a synctest bubble")
	}
	label := header[i : bytes.LastIndexByte(header, ']')+1]
	var count int
	var stacks []byte
	for stack := range bytes.SplitSeq(buf, []byte("\n\n")) {
		if first, _, _ := bytes.Cut(stack, []byte("\n")); bytes.Contains(first, label) {
			count++
			stacks = append(append(stacks, stack...), "\n\n"...)
		}
	}
	return count, stacks
}

type suite[T comparable] struct {
	newPolicy func() pipeline.Policy[T]
	value     T
}

type ctxKey struct{}

var errWork = errors.New("pipelinetest: the work failed")

func (s suite[T]) pipeline() *pipeline.Pipeline[T] { return pipeline.New(s.newPolicy()) }

func (s suite[T]) passesValue(t *testing.T) {
	calls := 0
	got, err := s.pipeline().Execute(t.Context(), func(context.Context) (T, error) {
		calls++
		return s.value, nil
	})
	if err != nil || got != s.value {
		t.Fatalf("Execute = (%v, %v), want (%v, nil)", got, err, s.value)
	}
	if calls < 1 {
		t.Fatalf("the work ran %d times, want at least once", calls)
	}
}

func (s suite[T]) passesError(t *testing.T) {
	var zero T
	_, err := s.pipeline().Execute(t.Context(), func(context.Context) (T, error) {
		return zero, outcome.MarkPermanent(errWork)
	})
	if !errors.Is(err, errWork) {
		t.Fatalf("Execute returned %v; the work's error must stay reachable with errors.Is", err)
	}
}

func (s suite[T]) propagatesContext(t *testing.T) {
	deadline := time.Now().Add(time.Hour)
	ctx, cancel := context.WithDeadline(context.WithValue(t.Context(), ctxKey{}, "marker"), deadline)
	defer cancel()
	seen := false
	_, err := s.pipeline().Execute(ctx, func(ctx context.Context) (T, error) {
		seen = true
		if got := ctx.Value(ctxKey{}); got != "marker" {
			t.Errorf("the work's context lost the caller's value: got %v", got)
		}
		if d, ok := ctx.Deadline(); !ok || d.After(deadline) {
			t.Errorf("the work's context deadline is %v (set: %v), want at or before the caller's %v", d, ok, deadline)
		}
		return s.value, nil
	})
	if err != nil || !seen {
		t.Fatalf("Execute = %v, work ran: %v; want success", err, seen)
	}
}

func (s suite[T]) returnsPromptlyWhenCanceled(t *testing.T) {
	p := s.pipeline()
	ctx, cancel := context.WithCancel(t.Context())
	started := make(chan struct{})
	returned := make(chan error, 1)
	go func() {
		_, err := p.Execute(ctx, func(ctx context.Context) (T, error) {
			close(started)
			<-ctx.Done()
			var zero T
			return zero, ctx.Err()
		})
		returned <- err
	}()
	<-started
	synctest.Wait()
	cancel()
	synctest.Wait() // every goroutine of the bubble has done all it can without time passing
	select {
	case err := <-returned:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("after cancellation Execute returned %v, want an error matching context.Canceled", err)
		}
	default:
		t.Fatal("Execute did not return once the caller canceled, without waiting for time to pass")
	}
}

func (s suite[T]) refusesCanceledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	start := time.Now()
	_, err := s.pipeline().Execute(ctx, func(ctx context.Context) (T, error) {
		var zero T
		return zero, ctx.Err()
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("with a canceled context Execute returned %v, want an error matching context.Canceled", err)
	}
	if waited := time.Since(start); waited > 0 {
		t.Fatalf("with a canceled context Execute waited %v before returning", waited)
	}
}

func (s suite[T]) leavesNoGoroutine(t *testing.T) {
	p := s.pipeline()
	before, _ := bubble()
	var zero T
	works := []pipeline.Func[T]{
		func(context.Context) (T, error) { return s.value, nil },
		func(context.Context) (T, error) { return zero, errWork },
		func(context.Context) (T, error) { return zero, outcome.MarkPermanent(errWork) },
	}
	for _, work := range works {
		_, _ = p.Execute(t.Context(), work)
		noneLeft(t, before)
	}
}

func (s suite[T]) propagatesPanic(t *testing.T) {
	p := s.pipeline()
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
		_, _ = p.Execute(t.Context(), func(context.Context) (T, error) { panic(boom{}) })
		t.Fatal("Execute returned normally after the work panicked")
	}()
	synctest.Wait()
	got, err := p.Execute(t.Context(), func(context.Context) (T, error) { return s.value, nil })
	if err != nil || got != s.value {
		t.Fatalf("after a panic, Execute = (%v, %v), want (%v, nil): the policy is wedged", got, err, s.value)
	}
}

func (s suite[T]) concurrentUse(t *testing.T) {
	p := s.pipeline()
	const goroutines, calls = 16, 8
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range calls {
				_, err := p.Execute(t.Context(), func(context.Context) (T, error) {
					if (g+i)%4 == 0 {
						var zero T
						return zero, outcome.MarkPermanent(errWork)
					}
					return s.value, nil
				})
				if err != nil && !errors.Is(err, errWork) {
					t.Errorf("Execute returned %v, want nil or the work's error", err)
				}
			}
		})
	}
	wg.Wait()
}

package pipeline

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"

	"github.com/jonboulle/clockwork"

	"github.com/resilience-go/pipeline/outcome"
)

// Func is one unit of work: one attempt at the call a pipeline protects. It must
// honour ctx, which is the attempt's own context.
type Func[T any] func(ctx context.Context) (T, error)

// Policy is one stage of a pipeline. Execute runs the stage once for the call or
// attempt it is given; it calls next.Run zero or more times to run the stages
// inside it and, at the end of the chain, the caller's Func.
//
// A Policy must be safe for concurrent use: one pipeline runs many calls at once.
// It must not keep next or ctx beyond its own return, and it must not swallow a
// panic that comes out of next.Run.
type Policy[T any] interface {
	Execute(ctx context.Context, next Next[T]) Result[T]
}

// PolicyFunc adapts a plain function to a [Policy].
type PolicyFunc[T any] func(ctx context.Context, next Next[T]) Result[T]

// Execute calls f(ctx, next).
func (f PolicyFunc[T]) Execute(ctx context.Context, next Next[T]) Result[T] { return f(ctx, next) }

// Options are the settings every stage of one pipeline shares. The zero value is
// valid and means: the built-in classification rules, no event hook, real time.
type Options[T any] struct {
	// Classifier is consulted once per attempt, after the caller's cancellation
	// and errors marked at their source, and before the built-in rules. It can
	// classify returned values as well as errors. Nil means none.
	Classifier outcome.Classifier[T]
	// OnEvent receives every event the pipeline's stages emit, on the goroutine
	// that emitted it, never while a stage holds a lock. It may be called
	// concurrently and must be safe for that. Nil means no hook; events are then
	// not even built.
	OnEvent func(Event)
	// Clock measures attempt durations and paces stages that wait, such as a
	// retry's backoff. Nil means real time.
	Clock clockwork.Clock
}

// Pipeline runs calls through an ordered list of stages. Build one with [New],
// once, and share it: it is immutable and safe for concurrent use.
type Pipeline[T any] struct {
	policies   []Policy[T]
	classifier outcome.Classifier[T]
	onEvent    func(Event)
	clock      clockwork.Clock
	guards     *sync.Pool // of *guard[T], for work run by Next.AbandonAfter
}

// New composes policies into a pipeline, the first one outermost: New(a, b).
// Execute(ctx, fn) runs a, which runs b, which runs fn. With no policies, Execute
// runs fn once. New panics, naming the position, if a policy is nil; that is a
// programming error, typically a stage whose constructor's error was ignored.
func New[T any](policies ...Policy[T]) *Pipeline[T] {
	for i, p := range policies {
		if isNil(p) {
			panic(fmt.Sprintf("pipeline: New: policy %d of %d is nil", i+1, len(policies)))
		}
	}
	p := &Pipeline[T]{
		policies: append([]Policy[T](nil), policies...),
		clock:    clockwork.NewRealClock(),
		guards:   new(sync.Pool),
	}
	p.guards.New = func() any { return newGuard[T](p.guards) }
	return p
}

// isNil reports whether p is nil or holds a nil pointer or function.
func isNil(p any) bool {
	if p == nil {
		return true
	}
	switch v := reflect.ValueOf(p); v.Kind() {
	case reflect.Pointer, reflect.Func, reflect.Map, reflect.Slice, reflect.Chan, reflect.Interface:
		return v.IsNil()
	}
	return false
}

// With returns a copy of p that uses the options o. p itself is unchanged.
func (p *Pipeline[T]) With(o Options[T]) *Pipeline[T] {
	q := *p
	q.classifier = o.Classifier
	q.onEvent = o.OnEvent
	q.clock = o.Clock
	if q.clock == nil {
		q.clock = clockwork.NewRealClock()
	}
	return &q
}

var errNilFunc = errors.New("pipeline: Execute: fn is nil")

// Execute runs one logical call of fn through the pipeline's stages and returns
// what the outermost stage returned. A nil fn is refused with an error. A panic in
// fn propagates to the caller after every stage has cleaned up.
func (p *Pipeline[T]) Execute(ctx context.Context, fn Func[T]) (T, error) {
	if fn == nil {
		var zero T
		return zero, errNilFunc
	}
	r := Next[T]{p: p, fn: fn, pos: position{attempt: 1}}.Run(ctx)
	return r.Value, r.Err
}

// Execute runs fn once through policies, the first outermost, with T inferred from
// fn. It builds a pipeline for this one call; a hot path should build one with
// [New] and reuse it.
func Execute[T any](ctx context.Context, fn Func[T], policies ...Policy[T]) (T, error) {
	return New(policies...).Execute(ctx, fn)
}

package fallback_test

import (
	"context"
	"sync"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/outcome"
)

// events collects a pipeline's events; safe for concurrent use.
type events struct {
	mu  sync.Mutex
	all []pipeline.Event
}

func (e *events) add(_ context.Context, _ pipeline.Source, ev pipeline.Event) {
	e.mu.Lock()
	e.all = append(e.all, ev)
	e.mu.Unlock()
}

func (e *events) list() []pipeline.Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]pipeline.Event(nil), e.all...)
}

// released records the values a pipeline releases; safe for concurrent use.
type released struct {
	mu   sync.Mutex
	vals []string
}

func (r *released) add(v string) {
	r.mu.Lock()
	r.vals = append(r.vals, v)
	r.mu.Unlock()
}

func (r *released) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.vals...)
}

// spy returns a stage that stores the verdict of the result it passes outward.
func spy[T any](verdict *outcome.Verdict) pipeline.Policy[T] {
	return pipeline.PolicyFunc[T](func(ctx context.Context, next pipeline.Next[T]) pipeline.Result[T] {
		r := next.Run(ctx)
		*verdict = r.Verdict
		return r
	})
}

// answer returns a stage that answers every call with r, without running the
// work.
func answer[T any](r pipeline.Result[T]) pipeline.Policy[T] {
	return pipeline.PolicyFunc[T](func(context.Context, pipeline.Next[T]) pipeline.Result[T] { return r })
}

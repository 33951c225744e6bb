package fault_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/fault"
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

// spy returns a stage that stores the verdict of the result it passes outward.
func spy[T any](verdict *outcome.Verdict) pipeline.Policy[T] {
	return pipeline.PolicyFunc[T](func(ctx context.Context, next pipeline.Next[T]) pipeline.Result[T] {
		r := next.Run(ctx)
		*verdict = r.Verdict
		return r
	})
}

// stage builds a fault stage over cfg.
func stage(t testing.TB, cfg fault.Config[string]) *fault.Policy[string] {
	t.Helper()
	p, err := fault.New(cfg)
	require.NoError(t, err)
	return p
}

// panicSource is a random source that must never be drawn from.
type panicSource struct{}

func (panicSource) Uint64() uint64 { panic("the stage drew a random number") }

// constSource always draws u.
type constSource uint64

func (c constSource) Uint64() uint64 { return uint64(c) }

package pipelinetest_test

import (
	"context"
	"fmt"
	"path"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/pipelinetest"
)

// passThrough is the simplest correct stage.
func passThrough() pipeline.Policy[int] {
	return pipeline.PolicyFunc[int](func(ctx context.Context, next pipeline.Next[int]) pipeline.Result[int] {
		return next.Run(ctx)
	})
}

// twice is a correct stage that runs next.Run twice at once, on goroutines of
// its own, waits for both and returns the first copy's result, as the core's
// documentation allows. A panic in either copy is raised again on the
// caller's goroutine once both have returned.
func twice() pipeline.Policy[int] {
	return pipeline.PolicyFunc[int](func(ctx context.Context, next pipeline.Next[int]) pipeline.Result[int] {
		var (
			results [2]pipeline.Result[int]
			panics  [2]any
			wg      sync.WaitGroup
		)
		for i := range results {
			wg.Go(func() {
				defer func() { panics[i] = recover() }()
				results[i] = next.Run(ctx)
			})
		}
		wg.Wait()
		for _, p := range panics {
			if p != nil {
				panic(p)
			}
		}
		next.Discard(results[1])
		return results[0]
	})
}

// bulkhead is a correct stage that waits: it admits size calls into the rest
// of the pipeline at once, and a call that waits for a slot gives up when its
// context is done, with the stop pipeline.Interrupted builds.
type bulkhead struct {
	slots chan struct{}
}

func newBulkhead(size int) pipeline.Policy[int] {
	return &bulkhead{slots: make(chan struct{}, size)}
}

// Execute waits for a slot, or for ctx to be done.
func (b *bulkhead) Execute(ctx context.Context, next pipeline.Next[int]) pipeline.Result[int] {
	select {
	case b.slots <- struct{}{}:
	case <-ctx.Done():
		return next.Refuse(ctx, pipeline.Interrupted(ctx, pipeline.StageInfo{Kind: "bulkhead"}))
	}
	defer func() { <-b.slots }()
	return next.Run(ctx)
}

func TestCorrectPolicyPasses(t *testing.T) {
	pipelinetest.Run(t, passThrough, 42)
}

func TestConcurrentNextRunPasses(t *testing.T) {
	pipelinetest.Run(t, twice, 42)
}

func TestWaitingPolicyPasses(t *testing.T) {
	for _, size := range []int{1, 4} {
		t.Run(fmt.Sprintf("size %d", size), func(t *testing.T) {
			pipelinetest.Run(t, func() pipeline.Policy[int] { return newBulkhead(size) }, 42)
		})
	}
}

// The hooks see every check's events, each with its check's name, and After
// runs once, after the checks.
func TestRunWithHooks(t *testing.T) {
	var (
		mu       sync.Mutex
		attempts = map[string]int{} // attempt events, by check
		after    int
	)
	pipelinetest.RunWith(t, pipelinetest.Config[int]{
		NewPolicy: passThrough,
		Value:     42,
		OnEvent: func(t *testing.T, e pipeline.Event) {
			if a, ok := e.(pipeline.AttemptFinished); ok {
				mu.Lock()
				attempts[path.Base(t.Name())]++
				mu.Unlock()
				if path.Base(t.Name()) == "PassesValueOfSlowWork" {
					assert.Equal(t, 5*time.Millisecond, a.Duration, "the slow work takes virtual time")
				}
			}
		},
		After: func(t *testing.T) {
			after++
			mu.Lock()
			defer mu.Unlock()
			assert.Equal(t, 1, attempts["PassesValue"])
			assert.Equal(t, 1, attempts["PassesValueOfSlowWork"])
			assert.Equal(t, 64, attempts["ReturnsPromptlyWhenSaturated"])
			assert.Equal(t, 16*8, attempts["ConcurrentUse"])
		},
	})
	assert.Equal(t, 1, after)
}

package fault_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/pipelinetest"
	"github.com/resilience-go/pipeline/policy/fault"
)

// Many goroutines share one fault stage with every fault on and a seeded
// source; some callers give up during an injected delay. Every call ends
// with the work's value, an injected fault, or its caller's cancellation;
// the events account for every fault; no goroutine is left behind.
func TestHammer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var injected [fault.Value + 1]atomic.Int32
		p := stage(t, fault.Config[string]{
			Enabled: true, Transient: 0.1, Throttled: 0.1, RetryAfter: time.Second, Permanent: 0.05,
			Value: 0.05, NewValue: func() string { return "fake" }, Latency: 0.2, Delay: 20 * time.Millisecond,
			Rand: rand.NewPCG(1, 2),
		})
		pl := pipeline.New[string](p).With(pipeline.Options[string]{
			OnEvent: func(_ context.Context, _ pipeline.Source, e pipeline.Event) {
				if i, ok := e.(fault.Injected); ok {
					injected[i.Kind].Add(1)
				}
			},
		})
		before := pipelinetest.Goroutines()
		const goroutines, calls = 16, 100
		var real, faults, canceled, values atomic.Int32
		var wg sync.WaitGroup
		for g := range goroutines {
			rng := rand.New(rand.NewPCG(uint64(g), 9))
			wg.Go(func() {
				for range calls {
					ctx, cancel := context.WithTimeout(t.Context(), time.Duration(5+rng.IntN(40))*time.Millisecond)
					v, err := pl.Execute(ctx, func(context.Context) (string, error) { return "real", nil })
					cancel()
					switch {
					case err == nil && v == "real":
						real.Add(1)
					case err == nil && v == "fake":
						values.Add(1)
					case errors.Is(err, context.DeadlineExceeded) && errors.Is(err, fault.ErrInjected):
						canceled.Add(1) // the caller's deadline ended an injected delay
					case errors.Is(err, fault.ErrInjected):
						faults.Add(1)
					default:
						t.Errorf("unexpected (%q, %v)", v, err)
					}
				}
			})
		}
		wg.Wait()
		synctest.Wait()
		assert.Equal(t, before, pipelinetest.Goroutines())
		assert.Equal(t, int32(goroutines*calls), real.Load()+values.Load()+faults.Load()+canceled.Load())
		// An injected failure returned once its caller's deadline has passed
		// comes back as the caller's Deadline stop wrapping it: counted as
		// canceled.
		failures := injected[fault.Transient].Load() + injected[fault.Throttled].Load() + injected[fault.Permanent].Load()
		assert.GreaterOrEqual(t, failures, faults.Load())
		assert.LessOrEqual(t, failures, faults.Load()+canceled.Load())
		assert.Equal(t, injected[fault.Value].Load(), values.Load())
		assert.Positive(t, canceled.Load(), "no caller ever gave up during a delay")
		assert.Positive(t, injected[fault.Latency].Load()-canceled.Load(), "no delay ever ran to its end")
	})
}

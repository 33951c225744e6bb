package hedge_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/budget"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/pipelinetest"
	"github.com/resilience-go/pipeline/policy/breaker"
	"github.com/resilience-go/pipeline/policy/hedge"
)

// Many goroutines share one hedge stage, breaker and budget; copies take random
// times, fail at random and are sometimes cancelled by their caller. Every call
// returns with a value one of its own copies produced; every copy has returned
// by then; every value but the one a call keeps is released exactly once; and no
// goroutine is left. It runs with the stage's default clock, under which a
// synctest bubble gives each hedge a timer of its own, and with a clockwork
// real clock, under which the stage's one schedule times every call's hedge.
func TestHammer(t *testing.T) {
	t.Run("own-timers", func(t *testing.T) { hammer(t, nil) })
	t.Run("schedule", func(t *testing.T) { hammer(t, clockwork.NewRealClock()) })
}

func hammer(t *testing.T, clock clockwork.Clock) {
	synctest.Test(t, func(t *testing.T) {
		br, err := breaker.New(breaker.Config{ConsecutiveFailures: 8})
		require.NoError(t, err)
		b, err := budget.New(budget.Config{})
		require.NoError(t, err)
		var released sync.Map // value -> times released
		p := stage(t, hedge.Config{Breaker: br, Budget: b, MaxAttempts: 3, Clock: clock})
		pl := pipeline.New(breaker.Guard[string](br), pipeline.Policy[string](p)).With(pipeline.Options[string]{
			Release: func(v string) {
				n, _ := released.LoadOrStore(v, new(atomic.Int32))
				n.(*atomic.Int32).Add(1)
			},
		})
		before := pipelinetest.Goroutines()

		const goroutines, calls = 24, 40
		var inFlight, produced, ran atomic.Int32
		var wg sync.WaitGroup
		for g := range goroutines {
			rng := rand.New(rand.NewPCG(uint64(g), 7))
			wg.Go(func() {
				for i := range calls {
					ctx, cancel := context.WithTimeout(t.Context(), time.Duration(20+rng.IntN(200))*time.Millisecond)
					var took [3]time.Duration
					var fails [3]bool
					for k := range took {
						took[k] = time.Duration(rng.IntN(40)) * time.Millisecond
						fails[k] = rng.IntN(10) == 0
					}
					var copies atomic.Int32
					v, err := pl.Execute(ctx, func(ctx context.Context) (string, error) {
						inFlight.Add(1)
						defer inFlight.Add(-1)
						k := copies.Add(1) - 1
						value := fmt.Sprintf("g%d-c%d-copy%d", g, i, k)
						produced.Add(1)
						select {
						case <-time.After(took[k]):
						case <-ctx.Done():
							return value, ctx.Err()
						}
						if fails[k] {
							return value, outcome.MarkTransient(errDown)
						}
						return value, nil
					})
					cancel()
					if copies.Load() > 0 {
						ran.Add(1)
					}
					if err == nil {
						assert.Regexp(t, fmt.Sprintf("^g%d-c%d-copy[012]$", g, i), v)
					}
				}
			})
		}
		wg.Wait()
		synctest.Wait()
		assert.Zero(t, inFlight.Load(), "a copy outlived its call")
		assert.Equal(t, before, pipelinetest.Goroutines())
		assert.GreaterOrEqual(t, b.Tokens(), 0.0)
		twice, total := 0, int32(0)
		released.Range(func(_, n any) bool {
			total += n.(*atomic.Int32).Load()
			if n.(*atomic.Int32).Load() != 1 {
				twice++
			}
			return true
		})
		assert.Zero(t, twice, "a value was released more than once")
		assert.Equal(t, produced.Load()-ran.Load(), total, "every copy but the one each call kept is released")
		assert.Greater(t, produced.Load(), int32(goroutines*calls), "no call was ever hedged")
	})
}

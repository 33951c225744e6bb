package fallback_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/breaker"
	"github.com/resilience-go/pipeline/policy/fallback"
	"github.com/resilience-go/pipeline/policy/retry"
)

// Many goroutines share one fallback over a retry and a breaker whose work
// fails at random; the breaker trips and refuses along the way. Every call
// ends with its own value or its own fallback; every value but the one a call
// returns is released exactly once; the fallback runs once per call that did
// not succeed. It runs in a synctest bubble, where no time passes while the
// goroutines run, so a trip refuses every call after it.
func TestHammer(t *testing.T) {
	synctest.Test(t, hammer)
}

func hammer(t *testing.T) {
	br, err := breaker.New(breaker.Config{ConsecutiveFailures: 5, BreakDuration: time.Second})
	require.NoError(t, err)
	rt, err := retry.New[string](retry.Config{MaxAttempts: 2, Backoff: retry.BackoffFunc(func(int, outcome.Verdict, rand.Source) time.Duration { return 0 }), RefusalPause: -1})
	require.NoError(t, err)
	var fallbacks, refusals atomic.Int32
	fb, err := fallback.New(fallback.Config[string]{
		Func: func(ctx context.Context, r pipeline.Result[string]) (string, error) {
			fallbacks.Add(1)
			if errors.Is(r.Err, pipeline.DependencyUnavailable) {
				refusals.Add(1)
			}
			return fmt.Sprintf("fallback of %v", ctx.Value(callKey{})), nil
		},
	})
	require.NoError(t, err)
	var releases sync.Map // value -> *atomic.Int32
	pl := pipeline.New(pipeline.Policy[string](fb), rt, breaker.Guard[string](br)).With(pipeline.Options[string]{
		Release: func(v string) {
			n, _ := releases.LoadOrStore(v, new(atomic.Int32))
			n.(*atomic.Int32).Add(1)
		},
	})

	const goroutines, calls = 16, 200
	var produced, failed atomic.Int32
	var wg sync.WaitGroup
	for g := range goroutines {
		rng := rand.New(rand.NewPCG(uint64(g), 1))
		wg.Go(func() {
			for i := range calls {
				id := fmt.Sprintf("g%d-c%d", g, i)
				var attempt atomic.Int32
				fails := rng.IntN(3) == 0
				v, err := pl.Execute(context.WithValue(context.Background(), callKey{}, id), func(context.Context) (string, error) {
					produced.Add(1)
					value := fmt.Sprintf("%s-a%d", id, attempt.Add(1))
					if fails {
						return value, errDown
					}
					return value, nil
				})
				assert.NoError(t, err)
				switch {
				case v == "fallback of "+id:
					failed.Add(1)
				case len(v) > len(id) && v[:len(id)+1] == id+"-":
				default:
					t.Errorf("call %s returned %q", id, v)
				}
			}
		})
	}
	wg.Wait()
	total, twice := int32(0), 0
	releases.Range(func(_, n any) bool {
		total += n.(*atomic.Int32).Load()
		if n.(*atomic.Int32).Load() != 1 {
			twice++
		}
		return true
	})
	assert.Zero(t, twice, "a value was released more than once")
	assert.Equal(t, failed.Load(), fallbacks.Load(), "the fallback ran once per call it answered")
	assert.Equal(t, produced.Load()-(goroutines*calls-failed.Load()), total, "every value but those returned is released")
	assert.Positive(t, refusals.Load(), "the breaker never refused: the hammer missed the refusal path")
	assert.Less(t, refusals.Load(), failed.Load(), "only refusals were replaced: the hammer missed exhausted retries")
}

type callKey struct{}

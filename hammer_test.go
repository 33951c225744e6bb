package pipeline_test

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
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/budget"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/pipelinetest"
	"github.com/resilience-go/pipeline/policy/breaker"
	"github.com/resilience-go/pipeline/policy/retry"
	"github.com/resilience-go/pipeline/policy/timeout"
)

// TestCardHammer drives one card pipeline (timeout, retry with a budget, breaker)
// from many goroutines at once, against a dependency that succeeds, fails, is
// slow, ignores its context or panics, on virtual time. Run under -race it checks
// that the stages share their state safely; it also checks that every call
// returns exactly once with a coherent result, that the retries stay within what
// the attempt limit allows, and that no goroutine outlives the calls.
func TestCardHammer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		before := pipelinetest.Goroutines()
		brk, err := breaker.New(breaker.Config{})
		require.NoError(t, err)
		funds, err := budget.New(budget.Config{})
		require.NoError(t, err)
		deadline, err := timeout.New[int](timeout.Config{Timeout: time.Second, Abandon: true, Grace: 10 * time.Millisecond})
		require.NoError(t, err)
		retries, err := retry.New[int](retry.Config{Budget: funds, Rand: &lockedPCG{r: rand.NewPCG(1, 2)}})
		require.NoError(t, err)
		var attempts, calls, panics, abandoned atomic.Int64
		p := pipeline.New(deadline, retries, breaker.Guard[int](brk)).With(pipeline.Options[int]{
			OnEvent: func(_ context.Context, _ pipeline.Source, e pipeline.Event) {
				if _, ok := e.(pipeline.Abandoned); ok {
					abandoned.Add(1)
				}
			},
		})
		dependency := func(ctx context.Context) (int, error) {
			n := attempts.Add(1)
			switch n % 11 {
			case 0, 1, 2:
				return 0, errHammer
			case 3:
				return 0, outcome.MarkPermanent(errHammer)
			case 4:
				select { // slow, but honours its context
				case <-time.After(2 * time.Second):
					return 1, nil
				case <-ctx.Done():
					return 0, ctx.Err()
				}
			case 5:
				time.Sleep(1500 * time.Millisecond) // virtual: ignores its context
				return 1, nil
			case 6:
				if n%3 == 0 {
					panic(errHammer)
				}
			}
			return 1, nil
		}

		const goroutines, perGoroutine = 32, 40
		var wg sync.WaitGroup
		for range goroutines {
			wg.Go(func() {
				for range perGoroutine {
					calls.Add(1)
					v, err := execute(p, t.Context(), dependency, &panics)
					switch {
					case err == nil:
						assert.Equal(t, 1, v)
					case errors.Is(err, errPanicked):
					default:
						_, isStop := errors.AsType[*pipeline.StopError](err)
						assert.True(t, isStop || errors.Is(err, errHammer), "unexpected error %v", err)
					}
					time.Sleep(10 * time.Millisecond) // virtual
				}
			})
		}
		wg.Wait()
		synctest.Wait()
		time.Sleep(time.Minute) // virtual: let every abandoned attempt finish
		synctest.Wait()

		assert.Equal(t, int64(goroutines*perGoroutine), calls.Load())
		assert.LessOrEqual(t, attempts.Load(), 3*calls.Load(), "at most MaxAttempts attempts per call")
		assert.Positive(t, panics.Load(), "the dependency's panics reached the callers")
		assert.Positive(t, abandoned.Load(), "work that ignored its context was abandoned")
		tokens := funds.Tokens()
		assert.GreaterOrEqual(t, tokens, 0.0)
		assert.LessOrEqual(t, tokens, funds.Capacity())
		assert.Equal(t, before, pipelinetest.Goroutines(), "no goroutine outlives the calls")
	})
}

var (
	errHammer   = errors.New("down")
	errPanicked = errors.New("the work panicked")
)

// execute runs one call and turns the dependency's panic, which must reach the
// caller, into errPanicked.
func execute(p *pipeline.Pipeline[int], ctx context.Context, fn pipeline.Func[int], panics *atomic.Int64) (v int, err error) {
	defer func() {
		if r := recover(); r != nil {
			if pe, ok := r.(*pipeline.PanicError); !ok || !errors.Is(pe, errHammer) {
				panic(r)
			}
			panics.Add(1)
			err = errPanicked
		}
	}()
	return p.Execute(ctx, fn)
}

// lockedPCG is a seeded random source safe for concurrent use.
type lockedPCG struct {
	mu sync.Mutex
	r  *rand.PCG
}

func (l *lockedPCG) Uint64() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.r.Uint64()
}

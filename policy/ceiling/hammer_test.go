package ceiling_test

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
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/pipelinetest"
	"github.com/resilience-go/pipeline/policy/ceiling"
)

// Many goroutines share one ceiling stage and its estimator, which arms
// during the run; attempts take random times, a few hang, some fail, some
// callers give up. Every cut happens within [Floor, Cap] of its attempt's
// start, and only once the estimator held MinSamples; an attempt is cut only
// if it would have run longer; no goroutine is left behind.
func TestHammer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := ceiling.Config{Floor: 20 * time.Millisecond, Cap: 400 * time.Millisecond, MinSamples: 30}
		p := stage(t, cfg)
		est := p.Estimator()
		pl := pipeline.New[string](p)
		before := pipelinetest.Goroutines()

		const goroutines, calls = 24, 60
		var cuts, unarmedCuts atomic.Int32
		var wg sync.WaitGroup
		for g := range goroutines {
			rng := rand.New(rand.NewPCG(uint64(g), 3))
			wg.Go(func() {
				for range calls {
					took := time.Duration(rng.IntN(30)) * time.Millisecond
					hangs, fails := rng.IntN(20) == 0, rng.IntN(10) == 0
					ctx, cancel := context.WithTimeout(t.Context(), time.Duration(100+rng.IntN(900))*time.Millisecond)
					start := time.Now()
					_, err := pl.Execute(ctx, func(ctx context.Context) (string, error) {
						if hangs {
							took = time.Hour
						}
						select {
						case <-time.After(took):
						case <-ctx.Done():
							return "", ctx.Err()
						}
						if fails {
							return "", errors.New("failed")
						}
						return "ok", nil
					})
					elapsed := time.Since(start)
					cancel()
					if !errors.Is(err, outcome.ErrTimeout) {
						continue
					}
					cuts.Add(1)
					if samples(est) < cfg.MinSamples { // samples only grow: it held fewer when it cut
						unarmedCuts.Add(1)
					}
					assert.GreaterOrEqual(t, elapsed, cfg.Floor, "cut under the floor")
					assert.LessOrEqual(t, elapsed, cfg.Cap, "cut over the cap")
					assert.Less(t, elapsed, took, "a cut attempt would have taken longer")
					stop, ok := errors.AsType[*pipeline.StopError](err)
					if assert.True(t, ok) {
						assert.Equal(t, "ceiling", stop.Stage)
					}
				}
			})
		}
		wg.Wait()
		synctest.Wait()
		assert.Equal(t, before, pipelinetest.Goroutines())
		assert.Positive(t, cuts.Load(), "nothing was ever cut")
		assert.Zero(t, unarmedCuts.Load(), "cut before MinSamples")
	})
}

package hedge_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/internal/hedgerule"
	"github.com/resilience-go/pipeline/latency"
	"github.com/resilience-go/pipeline/policy/hedge"
)

// Each copy's context says which copy it is, and a hedge that wins says so
// in an event; a first copy that wins raises none.
func TestCopiesAreNumberedAndAWinIsReported(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		est, err := latency.New(latency.Config{})
		require.NoError(t, err)
		for range hedgerule.DefaultMinSamples {
			est.Record(est.Now(), time.Millisecond)
		}
		h, err := hedge.New[int](hedge.Config{Estimator: est, Repeatable: true})
		require.NoError(t, err)
		var mu sync.Mutex
		var won []hedge.Won
		p := pipeline.New[int](h).With(pipeline.Options[int]{OnEvent: func(_ context.Context, _ pipeline.Source, e pipeline.Event) {
			if w, ok := e.(hedge.Won); ok {
				mu.Lock()
				won = append(won, w)
				mu.Unlock()
			}
		}})

		v, err := p.Execute(t.Context(), func(ctx context.Context) (int, error) {
			n, ok := hedge.CopyOf(ctx)
			require.True(t, ok)
			if n == 0 {
				<-ctx.Done() // the first copy hangs: the hedge wins
				return -1, ctx.Err()
			}
			return n, nil
		})
		require.NoError(t, err)
		assert.Equal(t, 1, v, "the hedge, copy 1, answered")
		assert.Equal(t, []hedge.Won{{Attempt: 1, Hedge: 1}}, won)

		won = nil
		v, err = p.Execute(t.Context(), func(ctx context.Context) (int, error) {
			n, _ := hedge.CopyOf(ctx)
			return n, nil
		})
		require.NoError(t, err)
		assert.Zero(t, v)
		assert.Empty(t, won, "the first copy won: no event")
		_, ok := hedge.CopyOf(t.Context())
		assert.False(t, ok, "a context the stage did not make")
	})
}

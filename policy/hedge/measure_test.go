package hedge_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/latency"
	"github.com/resilience-go/pipeline/policy/hedge"
	"github.com/resilience-go/pipeline/policy/timeout"
)

// An attempt that is not hedged is measured by the reading that ended it
// when the attempt ran right inside the timeout inside the stage (the
// pipeline keeps it on the context the stage lent), and by a reading of the
// stage's own when anything else stands between: here a stage that lingers
// 5 s after the work's 3 s, which the stage must count.
func TestAnAttemptIsMeasuredByItsOwnEndOnlyRightInsideATimeout(t *testing.T) {
	linger := pipeline.PolicyFunc[string](func(ctx context.Context, next pipeline.Next[string]) pipeline.Result[string] {
		r := next.Run(ctx)
		time.Sleep(5 * time.Second)
		return r
	})
	for _, tc := range []struct {
		name  string
		after func(h *hedge.Policy[string], each *timeout.Policy[string]) []pipeline.Policy[string]
		want  time.Duration
	}{
		{"hedge, timeout, work", func(h *hedge.Policy[string], each *timeout.Policy[string]) []pipeline.Policy[string] {
			return []pipeline.Policy[string]{h, each}
		}, 3 * time.Second},
		{"hedge, timeout, a stage that lingers, work", func(h *hedge.Policy[string], each *timeout.Policy[string]) []pipeline.Policy[string] {
			return []pipeline.Policy[string]{h, each, linger}
		}, 8 * time.Second},
		{"hedge, a stage that lingers, timeout, work", func(h *hedge.Policy[string], each *timeout.Policy[string]) []pipeline.Policy[string] {
			return []pipeline.Policy[string]{h, linger, each}
		}, 8 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				est, err := latency.New(latency.Config{})
				require.NoError(t, err)
				h, err := hedge.New[string](hedge.Config{Estimator: est})
				require.NoError(t, err)
				each, err := timeout.New[string](timeout.Config{Timeout: time.Minute})
				require.NoError(t, err)
				p := pipeline.New(tc.after(h, each)...).With(pipeline.Options[string]{
					OnAttempt: func(context.Context, pipeline.Source, pipeline.AttemptFinished) {},
				})
				_, err = p.Execute(t.Context(), func(context.Context) (string, error) {
					time.Sleep(3 * time.Second)
					return "ok", nil
				})
				require.NoError(t, err)
				d, n := est.Quantile(est.Now(), 1)
				require.Equal(t, 1, n)
				assert.InEpsilon(t, float64(tc.want), float64(d), 0.1, "measured %v", d)
			})
		})
	}
}

package pipelineotel_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/otel"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/breaker"
	"github.com/resilience-go/pipeline/policy/hedge"
	"github.com/resilience-go/pipeline/policy/retry"
	"github.com/resilience-go/pipeline/policy/timeout"
	"github.com/resilience-go/pipeline/standard"
)

// waitsAfter is a stage of one's own that waits d on the bubble's clock
// after the rest returned.
func waitsAfter(d time.Duration) pipeline.Policy[string] {
	return pipeline.PolicyFunc[string](func(ctx context.Context, next pipeline.Next[string]) pipeline.Result[string] {
		r := next.Run(ctx)
		_ = wait(context.Background(), d)
		return r
	})
}

// A call's duration runs until it returns, whatever waited after its last
// attempt: a stage of one's own that waits after the rest, a retry whose
// wait the caller cancels, a hedge that waits for the copy that lost. Any
// sharing of clock readings between the stages must keep these.
func TestACallLastsUntilItReturns(t *testing.T) {
	transient := outcome.MarkTransient(errors.New("boom"))
	for _, tc := range []struct {
		name   string
		stages func() []any
		cancel time.Duration // the caller cancels the call after this long, if set
		work   func(ctx context.Context) (string, error)
		want   string
	}{{
		name: "the preset's stages",
		stages: func() []any {
			return []any{
				timeout.Config{Timeout: time.Second},
				retry.Config{},
				must(breaker.New(breaker.Config{})),
				hedge.Config{},
				timeout.Config{Timeout: 500 * time.Millisecond},
			}
		},
		work: sleeper(10 * time.Millisecond),
		want: "outcome=ok,pipeline.name=exit} count=1 sum=0.01",
	}, {
		name:   "a stage of one's own waits after the rest",
		stages: func() []any { return []any{timeout.Config{Timeout: time.Second}, waitsAfter(50 * time.Millisecond)} },
		work:   sleeper(10 * time.Millisecond),
		want:   "outcome=ok,pipeline.name=exit} count=1 sum=0.06",
	}, {
		name: "a retry waits, and the caller cancels the wait",
		stages: func() []any {
			return []any{
				timeout.Config{Timeout: time.Second},
				retry.Config{MaxAttempts: 3, Backoff: retry.Constant{Interval: 200 * time.Millisecond, Jitter: retry.NoJitter}},
				must(breaker.New(breaker.Config{})),
			}
		},
		cancel: 60 * time.Millisecond,
		work: func(ctx context.Context) (string, error) {
			return "", errors.Join(wait(ctx, 10*time.Millisecond), transient)
		},
		want: "outcome=canceled,pipeline.name=exit} count=1 sum=0.06",
	}, {
		name: "a hedge waits for the copy that lost",
		stages: func() []any {
			return []any{
				timeout.Config{Timeout: time.Second},
				hedge.Config{MinSamples: 1, MaxExtra: 1},
			}
		},
		work: func(ctx context.Context) (string, error) {
			if k, _ := hedge.CopyOf(ctx); k == 0 {
				return "late", wait(context.Background(), 100*time.Millisecond) // the first copy ignores its cancellation
			}
			return "ok", wait(ctx, 10*time.Millisecond)
		},
		want: "outcome=ok,pipeline.name=exit} count=2 sum=0.11", // a first call of 10 ms, then one of 100
	}} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := newRig(t)
				p, err := standard.Compose[string](append([]any{pipelineotel.Calls[string](r.tel)}, tc.stages()...)...)
				require.NoError(t, err)
				p = p.With(pipeline.Options[string]{Name: "exit", OnEvent: r.tel.Hook()})
				if tc.name == "a hedge waits for the copy that lost" {
					_, err := p.Execute(context.Background(), sleeper(10*time.Millisecond)) // a sample, so that the next call is hedged after 10 ms
					require.NoError(t, err)
				}
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				if tc.cancel > 0 {
					time.AfterFunc(tc.cancel, cancel)
				}
				_, _ = p.Execute(hedge.Repeatable(ctx), tc.work)
				assert.Contains(t, r.metrics(t), pipelineotel.MetricCallDuration+"{"+tc.want)
			})
		})
	}
}

// must is v, or a panic on err.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

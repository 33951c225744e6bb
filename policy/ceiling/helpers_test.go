package ceiling_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/latency"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/ceiling"
)

// warm returns an estimator on real time (virtual in a synctest bubble)
// holding n samples of d, recorded now.
func warm(t testing.TB, n int, d time.Duration) *latency.Estimator {
	t.Helper()
	est, err := latency.New(latency.Config{})
	require.NoError(t, err)
	for range n {
		est.Record(est.Now(), d)
	}
	return est
}

// samples is how many samples est holds now.
func samples(est *latency.Estimator) int {
	_, n := est.Quantile(est.Now(), 0.5)
	return n
}

// stage builds a ceiling stage over cfg.
func stage(t testing.TB, cfg ceiling.Config) *ceiling.Policy[string] {
	t.Helper()
	p, err := ceiling.New[string](cfg)
	require.NoError(t, err)
	return p
}

// hang is work that honours its context and never answers on its own.
func hang(ctx context.Context) (string, error) {
	<-ctx.Done()
	return "", ctx.Err()
}

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

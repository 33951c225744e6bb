package hedge_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/internal/hedgerule"
	"github.com/resilience-go/pipeline/latency"
	"github.com/resilience-go/pipeline/policy/hedge"
)

// warm returns an estimator holding n samples of d, recorded now. Call it inside
// a synctest bubble: it runs on the bubble's clock.
func warm(t *testing.T, n int, d time.Duration) *latency.Estimator {
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

// stage builds a hedge stage over cfg, whose estimator is warm with 20 samples
// of 1 ms unless cfg has one, marking every call repeatable.
func stage(t *testing.T, cfg hedge.Config) *hedge.Policy[string] {
	t.Helper()
	if cfg.Estimator == nil {
		cfg.Estimator = warm(t, hedgerule.DefaultMinSamples, time.Millisecond)
	}
	cfg.Repeatable = true
	p, err := hedge.New[string](cfg)
	require.NoError(t, err)
	return p
}

// copyPlan is what one copy of the work does: wait, then return.
type copyPlan struct {
	after  time.Duration
	value  string
	err    error
	panics any // if not nil, the copy panics with it instead
}

// work is a Func whose n-th call (0-based) follows plans[n]. It records how
// each copy ended, and whether its context was cancelled.
type work struct {
	plans    []copyPlan
	calls    atomic.Int32
	mu       sync.Mutex
	canceled []int // copies whose context was done before their plan ended
	running  atomic.Int32
}

func (w *work) fn(ctx context.Context) (string, error) {
	n := int(w.calls.Add(1)) - 1
	w.running.Add(1)
	defer w.running.Add(-1)
	plan := w.plans[min(n, len(w.plans)-1)]
	select {
	case <-time.After(plan.after):
	case <-ctx.Done():
		w.mu.Lock()
		w.canceled = append(w.canceled, n)
		w.mu.Unlock()
		return "canceled " + plan.value, ctx.Err()
	}
	if plan.panics != nil {
		panic(plan.panics)
	}
	return plan.value, plan.err
}

func (w *work) canceledCopies() []int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]int(nil), w.canceled...)
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

func (e *events) named(name string) []pipeline.Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []pipeline.Event
	for _, ev := range e.all {
		if ev.Name() == name {
			out = append(out, ev)
		}
	}
	return out
}

// execute runs w through p, with events recorded into ev if it is not nil and
// the options o, and returns the result and how long the call took on the
// bubble's clock.
func execute(ctx context.Context, p *hedge.Policy[string], w *work, ev *events, o ...pipeline.Options[string]) (string, time.Duration, error) {
	pl := pipeline.New[string](p)
	if ev != nil {
		pl = pl.With(pipeline.Options[string]{OnEvent: ev.add})
	}
	for _, o := range o {
		pl = pl.With(o)
	}
	start := time.Now()
	v, err := pl.Execute(ctx, w.fn)
	return v, time.Since(start), err
}

package pipelineotel_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/otel"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/adaptive"
	"github.com/resilience-go/pipeline/policy/bulkhead"
	"github.com/resilience-go/pipeline/policy/ceiling"
	"github.com/resilience-go/pipeline/policy/fallback"
	"github.com/resilience-go/pipeline/policy/fault"
	"github.com/resilience-go/pipeline/policy/hedge"
	"github.com/resilience-go/pipeline/policy/ratelimit"
	"github.com/resilience-go/pipeline/standard"
)

// TestHammer runs many goroutines through a preset, a hand-built card, the
// scopes (through Execute and through Get) and a card of the newer stages,
// sharing one Telemetry, succeeding and failing, hedged or not, queued,
// refused and replaced, while the metrics are collected and the scopes' keys
// come and go: run under -race, it checks that every call is counted once
// and that the limiters' gauges end with every slot given back.
func TestHammer(t *testing.T) {
	r := newRig(t)
	preset, err := pipelineotel.NewStandard[string](r.tel, standard.Config{Name: "preset", Hedge: hedge.Config{MinSamples: 1, Repeatable: true}})
	require.NoError(t, err)
	card := handBuilt(t, r.tel)
	scopes, err := pipelineotel.NewScopes(r.tel, standard.ScopesConfig[int, string]{MaxKeys: 4})
	require.NoError(t, err)
	guards, observed := guardCard(t, r)
	defer observed()
	const workers, calls = 8, 150
	var wg sync.WaitGroup
	done := make(chan struct{})
	collected := make(chan struct{})
	go func() { // collects while the calls run
		defer close(collected)
		for {
			select {
			case <-done:
				return
			case <-time.After(time.Millisecond):
				r.metrics(t)
			}
		}
	}()
	for w := range workers {
		wg.Go(func() {
			for i := range calls {
				ctx := hedge.Repeatable(context.Background())
				work := func(ctx context.Context) (string, error) {
					switch {
					case i%5 == 0: // permanent: no retry, so no backoff to wait out
						return "", outcome.MarkPermanent(errors.New("boom"))
					case i%25 == 1: // slow enough to be hedged
						return "ok", wait(ctx, 25*time.Millisecond)
					}
					return "ok", nil
				}
				_, _ = preset.Execute(ctx, work)
				_, _ = card.Execute(ctx, work)
				if p, err := scopes.Get((w + i) % 7); err == nil && i%2 == 0 {
					_, _ = p.Execute(ctx, work)
				} else {
					_, _ = scopes.Execute(ctx, (w+i)%7, work)
				}
				_, _ = guards.Execute(ctx, work)
			}
		})
	}
	wg.Wait()
	close(done)
	<-collected

	var rm metricdata.ResourceMetrics
	require.NoError(t, r.reader.Collect(context.Background(), &rm))
	counted := map[string]uint64{}
	for _, m := range rm.ScopeMetrics[0].Metrics {
		if m.Name != pipelineotel.MetricCallDuration {
			continue
		}
		for _, p := range m.Data.(metricdata.Histogram[float64]).DataPoints {
			name, _ := p.Attributes.Value(pipelineotel.AttrPipeline)
			key := name.AsString()
			if key != "preset" && key != "h" && key != "g" {
				key = "scopes"
			}
			counted[key] += p.Count
		}
	}
	assert.Equal(t, map[string]uint64{"preset": workers * calls, "h": workers * calls, "scopes": workers * calls, "g": workers * calls}, counted)
	lines := r.metrics(t)
	assert.Equal(t, []string{
		"resilience.concurrency.in_flight{stage.kind=adaptive,stage.name=g} 0",
		"resilience.concurrency.in_flight{stage.kind=bulkhead,stage.name=g} 0",
	}, matching(lines, "resilience.concurrency.in_flight"), "every slot given back")
	assert.Equal(t, []string{
		"resilience.concurrency.queued{stage.kind=adaptive,stage.name=g} 0",
		"resilience.concurrency.queued{stage.kind=bulkhead,stage.name=g} 0",
	}, matching(lines, "resilience.concurrency.queued"))
}

// guardCard is a card of the newer stages for the hammer: a fallback, a rate
// limiter, a bulkhead and an adaptive limit with short queues, a ceiling
// and random faults, every limiter and the ceiling observed until observed
// is called.
func guardCard(t *testing.T, r rig) (p *pipeline.Pipeline[string], observed func()) {
	t.Helper()
	lim, err := ratelimit.New(ratelimit.Config{Name: "g", Rate: 5000, MaxWait: 5 * time.Millisecond})
	require.NoError(t, err)
	bh, err := bulkhead.New(bulkhead.Config{Name: "g", MaxConcurrent: 4, MaxQueue: 2, MaxWait: 10 * time.Millisecond})
	require.NoError(t, err)
	ad, err := adaptive.New(adaptive.Config{Name: "g", InitialLimit: 3, MaxQueue: 2, MaxWait: 10 * time.Millisecond, Interval: 20 * time.Millisecond})
	require.NoError(t, err)
	cl, err := ceiling.New[string](ceiling.Config{Name: "g", MinSamples: 10})
	require.NoError(t, err)
	p = guarded(t, r, "g",
		fallback.Config[string]{Name: "g", Func: func(context.Context, pipeline.Result[string]) (string, error) { return "spare", nil }},
		lim, bh, ad, cl,
		fault.Config[string]{Name: "g", Enabled: true, Transient: 0.1, Latency: 0.05, Delay: time.Millisecond},
	)
	stops := []func(){r.tel.ObserveRateLimiter(lim), r.tel.ObserveBulkhead(bh), r.tel.ObserveAdaptiveLimiter(ad), pipelineotel.ObserveCeiling(r.tel, cl)}
	return p, func() {
		for _, stop := range stops {
			stop()
		}
	}
}

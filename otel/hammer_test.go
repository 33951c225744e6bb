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

	"github.com/resilience-go/pipeline/otel"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/hedge"
	"github.com/resilience-go/pipeline/standard"
)

// TestHammer runs many goroutines through a preset and a hand-built card
// sharing one Telemetry, succeeding and failing, hedged or not, while the
// metrics are collected and the scopes' keys come and go: run under -race,
// it checks that every call is counted once.
func TestHammer(t *testing.T) {
	r := newRig(t)
	preset, err := pipelineotel.NewStandard[string](r.tel, standard.Config{Name: "preset", Hedge: hedge.Config{MinSamples: 1, Repeatable: true}})
	require.NoError(t, err)
	card := handBuilt(t, r.tel)
	scopes, err := pipelineotel.NewScopes(r.tel, standard.ScopesConfig[int, string]{MaxKeys: 4})
	require.NoError(t, err)
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
				_, _ = scopes.Execute(ctx, (w+i)%7, work)
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
			if key != "preset" && key != "h" {
				key = "scopes"
			}
			counted[key] += p.Count
		}
	}
	assert.Equal(t, map[string]uint64{"preset": workers * calls, "h": workers * calls, "scopes": workers * calls}, counted)
}

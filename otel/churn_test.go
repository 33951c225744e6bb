package pipelineotel_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline/otel"
	"github.com/resilience-go/pipeline/standard"
)

// TestScopeChurnKeepsTheSeriesBounded is issue #27 item 8 as a user met it:
// a Scopes of at most 100 keys on the SDK's default meter provider (a
// cardinality limit of 2,000 series per instrument), one call each to 2,500
// keys, then calls to "payments". Every counter and histogram stays within
// the family's few series, none falls into the SDK's overflow series, and
// the gauges report no more keys than the Scopes holds, "payments" among
// them. (Labelled by key, the call-duration histogram held 2,000 series for
// keys long evicted, and "payments" had none of its own.)
func TestScopeChurnKeepsTheSeriesBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t)
		cfg := scripted()
		cfg.Name = "tenants"
		s, err := pipelineotel.NewScopes(r.tel, standard.ScopesConfig[string, string]{Config: cfg, MaxKeys: 100})
		require.NoError(t, err)
		ok := func(context.Context) (string, error) { return "ok", nil }
		fail := func(context.Context) (string, error) { return "", errBoom }
		for i := range 2500 {
			work := ok
			if i%10 == 0 {
				work = fail // some keys trip their breakers: transitions and stops too
			}
			_, _ = s.Execute(context.Background(), fmt.Sprintf("tenant-%d", i), work)
		}
		for range 3 {
			_, err := s.Execute(context.Background(), "payments", ok)
			require.NoError(t, err)
		}

		lines := r.metrics(t)
		series := map[string]int{}
		for _, l := range lines {
			assert.NotContains(t, l, "otel.metric.overflow", "a series in the SDK's overflow")
			series[l[:strings.IndexByte(l, '{')]]++
		}
		for name, n := range series {
			switch name {
			case pipelineotel.MetricBreakerState, pipelineotel.MetricBreakerPressure, pipelineotel.MetricBudgetTokens, pipelineotel.MetricBudgetUtilization:
				assert.LessOrEqual(t, n, 100*5, "%s: the keys held, in at most 5 states", name) // state has a series per state seen
			default:
				assert.LessOrEqual(t, n, 10, "%s: the family's series", name)
			}
		}
		assert.Contains(t, matching(lines, pipelineotel.MetricBreakerState), "resilience.breaker.state{breaker.name=payments,breaker.state=closed} 1")
		assert.Contains(t, matching(lines, pipelineotel.MetricCallDuration+"{outcome=ok,pipeline.name=tenants}"), "resilience.call.duration{outcome=ok,pipeline.name=tenants} count=2253 sum=0")
	})
}

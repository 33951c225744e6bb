package simulation

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestScenarioProbeLead checks the probe-lead scenario on seed 1 (the
// 30-seed figures of docs/breaker.md come from TestTablesProbeLead): judged
// by a lead of two, healthy heavy-tailed phases almost never re-open on slow
// probes where probes judged alone re-open about one phase in 18, while a
// dependency browned out 10 times re-opens its phases as before.
func TestScenarioProbeLead(t *testing.T) {
	s, ok := Lookup("probe-lead")
	require.True(t, ok)
	phases, slow := map[string]int{}, map[string]int{}
	for seed := uint64(1); seed <= 1; seed++ {
		rs, err := s.Run(seed)
		require.NoError(t, err)
		require.Len(t, rs, 6)
		for _, r := range rs {
			p, sl := leadPhases(r)
			phases[r.Name] += p
			slow[r.Name] += sl
		}
	}
	share := func(name string) float64 {
		require.Positive(t, phases[name], name)
		return float64(slow[name]) / float64(phases[name])
	}
	assert.Less(t, share("probe-lead/healthy/lead-2"), 0.01, "healthy phases re-opened, lead 2")
	assert.Greater(t, share("probe-lead/healthy/lead-1"), 0.02, "healthy phases re-opened, probes judged alone: about one in 18")
	assert.Greater(t, share("probe-lead/brownout-10x/lead-2"), 0.85, "a 10x brownout re-opens")
	assert.GreaterOrEqual(t, share("probe-lead/brownout-10x/lead-2"), share("probe-lead/brownout-10x/lead-1")-0.05, "as when probes are judged alone")
	t.Logf("phases re-opened on slow probes: %v of %v", slow, phases)
}

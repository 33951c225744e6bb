package simulation

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestScenarioProbeLead checks the probe-lead scenario on a few seeds (the
// 30-seed figures of docs/simulation.md come from TestTablesProbeLead). Under
// the default probe rule no healthy phase re-opens, where the first probe
// judged alone re-opens about one in 18 (seeds 1 to 3). A dependency 3 times
// slower than its normal re-opens at least 72% of its phases on seeds 1 to 10:
// the 75% of the rule before the leads (two good probes in a row, one slow
// probe re-opening, 1 - 0.5²), less one standard error of these 200-odd
// phases (3 points); and 15 points more than the lead of two it replaced
// re-opens on the same seeds (about half; the standard error of the
// difference is about 4 points). A 10 times slower one re-opens more than 95%
// of its phases on seed 1, as under the lead of two.
func TestScenarioProbeLead(t *testing.T) {
	_, ok := lookup("probe-lead")
	require.True(t, ok)
	seeds := map[string]uint64{ // variant: the last seed run, from 1
		leadName("healthy", "default"): 3, leadName("healthy", "alone"): 3,
		leadName("brownout-3x", "default"): 10, leadName("brownout-3x", "lead-2"): 10,
		leadName("brownout-10x", "default"): 1, leadName("brownout-10x", "lead-2"): 1,
	}
	phases, slow := map[string]int{}, map[string]int{}
	for seed := uint64(1); seed <= 10; seed++ {
		for _, c := range probeLead(seed) {
			if seed > seeds[c.Name] {
				continue
			}
			r, err := Run(c)
			require.NoError(t, err)
			p, sl := leadPhases(r)
			phases[r.Name] += p
			slow[r.Name] += sl
		}
	}
	share := func(dependency, rule string) float64 {
		name := leadName(dependency, rule)
		require.Positive(t, phases[name], name)
		return float64(slow[name]) / float64(phases[name])
	}
	assert.Zero(t, share("healthy", "default"), "healthy phases re-opened, the default rule")
	assert.Greater(t, share("healthy", "alone"), 0.02, "healthy phases re-opened, the first probe alone: about one in 18")
	assert.GreaterOrEqual(t, share("brownout-3x", "default"), 0.72, "3 times slower: about 75% or more")
	assert.GreaterOrEqual(t, share("brownout-3x", "default"), share("brownout-3x", "lead-2")+0.15, "3 times slower: more than the lead of two")
	assert.Greater(t, share("brownout-10x", "default"), 0.95, "10 times slower")
	assert.Greater(t, share("brownout-10x", "lead-2"), 0.95, "10 times slower, the lead of two")
	t.Logf("phases re-opened on slow probes: %v of %v", slow, phases)
}

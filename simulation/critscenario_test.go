package simulation

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline/criticality"
)

// TestScenarioCriticality checks the criticality scenario's claim, the
// targets of its issue: critical goodput at least 99% of critical offered at
// twice the capacity and 95% at four times, at least 95% of refusals on
// sheddable calls, critical p99 at most 1.2 times the unloaded run's; and
// that the same runs unmarked refuse both levels alike.
func TestScenarioCriticality(t *testing.T) {
	s, ok := lookup("criticality")
	require.True(t, ok)
	rs, err := s.Run(DefaultSeed)
	require.NoError(t, err)
	t.Log("\n" + s.Summary(rs))
	require.Len(t, rs, 5)

	// The model's capacity: 30 workers over the mean of the log-normal
	// service time.
	sigma := math.Log(float64(limitLatency.P99)/float64(limitLatency.P50)) / z99
	mean := limitLatency.P50.Seconds() * math.Exp(sigma*sigma/2)
	require.InEpsilon(t, critCapacity, critWorkers/mean, 0.01)

	unloaded := rs[0].Levels[criticality.Critical]
	require.Equal(t, unloaded.Offered, unloaded.Served, "half the capacity is all served")
	for _, c := range []struct {
		marked, unmarked *Report
		goodput          float64
	}{{rs[1], rs[2], 0.99}, {rs[3], rs[4], 0.95}} {
		crit, shed := c.marked.Levels[criticality.Critical], c.marked.Levels[criticality.Sheddable]
		assert.GreaterOrEqual(t, ratio(crit.Served, crit.Offered), c.goodput, c.marked.Name)
		assert.GreaterOrEqual(t, ratio(shed.Refused, shed.Refused+crit.Refused), 0.95, c.marked.Name)
		assert.LessOrEqual(t, float64(crit.P99), 1.2*float64(unloaded.P99), c.marked.Name)
		// Unmarked, the bulkhead cannot tell them apart: each level is
		// served in about the same proportion.
		ucrit, ushed := c.unmarked.Levels[criticality.Critical], c.unmarked.Levels[criticality.Sheddable]
		assert.InDelta(t, ratio(ushed.Served, ushed.Offered), ratio(ucrit.Served, ucrit.Offered), 0.02, c.unmarked.Name)
		assert.Less(t, ratio(ucrit.Served, ucrit.Offered), 0.6, c.unmarked.Name)
	}
}

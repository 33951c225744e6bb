package simulate

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTables prints the figures docs/fleet.md quotes beyond seed 1: the
// outage and the sick process over seeds 1 to 10, for several even loads
// and the uneven one. It runs only with PIPELINE_TABLES=1 (about 240 runs,
// a few seconds without the race detector).
func TestTables(t *testing.T) {
	if os.Getenv("PIPELINE_TABLES") == "" {
		t.Skip("set PIPELINE_TABLES=1 to print the tables")
	}
	const seeds = 10
	loads := []struct {
		name  string
		rate  float64
		rates []float64
	}{
		{"0.5 calls/s", 0.5, nil}, {"1 call/s", 1, nil}, {"2 calls/s", 2, nil}, {"5 calls/s", 5, nil},
		{"uneven (2, 1, 0.5, 0.25)", 0, UnevenRates},
	}
	median := func(v []float64) float64 {
		slices.Sort(v)
		return (v[(len(v)-1)/2] + v[len(v)/2]) / 2
	}
	var b strings.Builder
	fmt.Fprintf(&b, "outage, seeds 1 to %d: mean doomed and wrongly refused calls; independent / naive and independent / quorum doomed, lowest and median\n", seeds)
	for _, l := range loads {
		var doomed, wrongly [3]float64
		var toNaive, toQuorum []float64
		for seed := uint64(1); seed <= seeds; seed++ {
			var d [3]float64
			for k, st := range Strategies {
				r, err := Run(Config{Seed: seed, Strategy: st, Situation: Outage, Rate: l.rate, Rates: l.rates})
				require.NoError(t, err)
				tot := r.Totals()
				d[k] = float64(tot.Doomed)
				doomed[k] += d[k] / seeds
				wrongly[k] += float64(tot.WronglyRefused) / seeds
			}
			toNaive = append(toNaive, d[0]/d[1])
			toQuorum = append(toQuorum, d[0]/d[2])
		}
		fmt.Fprintf(&b, "| %s | %.0f / %.0f / %.0f | %.0f / %.0f / %.0f | %.2f, %.2f | %.2f, %.2f |\n", l.name,
			doomed[0], doomed[1], doomed[2], wrongly[0], wrongly[1], wrongly[2],
			slices.Min(toNaive), median(toNaive), slices.Min(toQuorum), median(toQuorum))
	}
	fmt.Fprintf(&b, "sick process, seeds 1 to %d: calls refused to the 199 healthy processes, lowest to highest\n", seeds)
	for _, l := range loads[:4] {
		fmt.Fprintf(&b, "| %s |", l.name)
		for _, st := range Strategies {
			var v []float64
			for seed := uint64(1); seed <= seeds; seed++ {
				r, err := Run(Config{Seed: seed, Strategy: st, Situation: SickProcess, Rate: l.rate})
				require.NoError(t, err)
				v = append(v, float64(r.SparedRefused))
			}
			fmt.Fprintf(&b, " %.0f to %.0f |", slices.Min(v), slices.Max(v))
		}
		b.WriteByte('\n')
	}
	t.Log("\n" + b.String())
}

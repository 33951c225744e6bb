package simulation

import (
	"fmt"
	"strings"
	"time"

	"github.com/resilience-go/pipeline/simulation/chart"

	"github.com/resilience-go/pipeline/criticality"
	"github.com/resilience-go/pipeline/policy/bulkhead"
)

// The criticality scenario: a server of 30 workers whose calls take a median
// of 20 ms (p99 40 ms), so that it serves about 1,430 calls a second, sheds
// at its door with a bulkhead of 30 slots (no queue inside it), and is
// offered a two-class load: 20% of the calls Critical, the rest Sheddable,
// at half its capacity (the unloaded run), twice and four times it, with the
// levels marked and, for comparison, unmarked. At four times, Critical calls
// alone are 80% of what the server can do; the 30% of the example
// would be 120%, more than any shedding can serve.
const (
	critWorkers  = 30
	critCapacity = 1430 // calls a second the workers serve
	critShare    = 0.2  // of the calls, Critical
	critDuration = 60 * time.Second
)

func criticalityVariants(seed uint64) []Config {
	dep := Workers{Count: critWorkers, Base: limitLatency}
	run := func(name string, load float64, unmarked bool) Config {
		return Config{
			Name: "criticality/" + name, Seed: seed, Duration: critDuration, Rate: critCapacity * load,
			Dependency: dep, Client: Client{AttemptTimeout: limitTimeout, Limit: &Limit{
				Bulkhead: &bulkhead.Config{MaxConcurrent: critWorkers}, Critical: critShare, Unmarked: unmarked,
			}},
		}
	}
	return []Config{
		run("unloaded", 0.5, false),
		run("2x-marked", 2, false), run("2x-unmarked", 2, true),
		run("4x-marked", 4, false), run("4x-unmarked", 4, true),
	}
}

// criticalitySummary states, for each run, the Critical calls' goodput and
// p99 (against the unloaded run's), and the share of refusals that fell on
// Sheddable calls.
func criticalitySummary(rs []*Report) string {
	if len(rs) == 0 {
		return ""
	}
	base := rs[0].Levels[criticality.Critical].P99
	var b strings.Builder
	fmt.Fprintf(&b, "critical calls served, their p99 against the unloaded run's %s, and refusals that fell on sheddable calls:\n", millis(base))
	for _, r := range rs {
		c, s := r.Levels[criticality.Critical], r.Levels[criticality.Sheddable]
		shed := "none refused"
		if n := c.Refused + s.Refused; n > 0 {
			shed = fmt.Sprintf("%.2f%% of %d refusals on sheddable", 100*ratio(s.Refused, n), n)
		}
		fmt.Fprintf(&b, "  %-26s critical %6.2f%% of %6d, p99 %s (%.2fx); sheddable %5.1f%% served; %s\n",
			r.Name, 100*ratio(c.Served, c.Offered), c.Offered, millis(c.P99), float64(c.P99)/float64(max(base, 1)),
			100*ratio(s.Served, s.Offered), shed)
	}
	return b.String()
}

// criticalityScenario is the built-in scenario of criticality.
func criticalityScenario() Scenario {
	level := func(l criticality.Level) func(Second) float64 {
		return func(s Second) float64 { return float64(s.LevelServed[l]) }
	}
	return Scenario{
		Name: "criticality",
		Claim: "under two and four times a server's capacity, a bulkhead that honours criticality serves at least 99% and 95% of the critical calls " +
			"at their unloaded latency and refuses sheddable ones instead, where the same bulkhead with the levels unmarked refuses both alike",
		Variants: criticalityVariants,
		Compare: func(rs []*Report) []chart.Chart {
			return []chart.Chart{
				compareSeconds("critical calls served per second", "served calls", rs, level(criticality.Critical)),
				compareSeconds("sheddable calls served per second", "served calls", rs, level(criticality.Sheddable)),
			}
		},
		Summary: criticalitySummary,
	}
}

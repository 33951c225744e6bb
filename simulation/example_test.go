package simulation_test

import (
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/resilience-go/pipeline/budget"
	"github.com/resilience-go/pipeline/policy/breaker"
	"github.com/resilience-go/pipeline/simulation"
	"github.com/resilience-go/pipeline/standard"
)

// A retry storm in miniature: a dependency that fails everything for 10 s,
// called 20 times a second with 3 attempts per call, paid for by the default
// retry budget. The budget's 30 tokens and its refill of 3 a second hold the
// load on the failing dependency to at most 1 + (30 + 3 x 10) / 200 = 1.3
// attempts per call, where three attempts per call would triple it; the worst
// second, when the failure starts and the bucket is full, sees 2.6.
func Example() {
	report, err := simulation.Run(simulation.Config{
		Name:       "small storm",
		Seed:       1,
		Duration:   20 * time.Second,
		Rate:       20,
		Dependency: simulation.FailingFraction{Fraction: 1, From: 5 * time.Second, To: 15 * time.Second},
		Client: simulation.Client{
			Retry:  &simulation.Retry{MaxAttempts: 3},
			Budget: &budget.Config{},
		},
	})
	if err != nil {
		panic(err)
	}
	fmt.Print(report)
	// Output:
	// small storm (seed 1): 1 process(es) x 20 calls/s for 20s
	//   offered       400
	//   served        200 (availability 50.00%)
	//   refused       0 by breaker, 185 by budget
	//   failed        15
	//   attempts      459 (1.147 per call; worst second 5: 2.600; during faults 1.295)
	//   latency       p50 18.0ms, p90 47.5ms, p99 91.1ms (served calls, end to end)
	//   breaker       0 opens, 0 probes (peak 0 per 100ms at 0s)
	//   recovery      0s after the last fault ended (stable after 0s)
}

// A breaker in front of a dependency with a 10 s outage: it opens on the
// fifth failure in a row, in the second call, whose third attempt it refuses;
// it refuses the calls of its 15 s break (no jitter here), and its two probes,
// after the outage, close it. The dependency's latency is tight, so that no
// probe is slow by the breaker's measured normal (3x the median), which would
// re-open it.
func ExampleRun() {
	report, err := simulation.Run(simulation.Config{
		Name:     "outage",
		Seed:     1,
		Duration: 40 * time.Second,
		Rate:     20,
		Dependency: simulation.Outage{From: 2 * time.Second, To: 12 * time.Second,
			Base: simulation.Healthy{P50: 20 * time.Millisecond, P99: 40 * time.Millisecond}},
		Client: simulation.Client{
			Breaker: &breaker.Config{BreakJitter: breaker.JitterNone},
			Budget:  &budget.Config{},
			Retry:   &simulation.Retry{},
		},
	})
	if err != nil {
		panic(err)
	}
	fmt.Print(report)
	// Output:
	// outage (seed 1): 1 process(es) x 20 calls/s for 40s
	//   offered       800
	//   served        497 (availability 62.12%)
	//   refused       302 by breaker, 0 by budget
	//   failed        1
	//   attempts      502 (0.627 per call; worst second 0: 1.000; during faults 0.025)
	//   latency       p50 19.6ms, p90 29.8ms, p99 40.1ms (served calls, end to end)
	//   breaker       1 opens (first at 2.145s: consecutive failures), 2 probes (peak 1 per 100ms at 17.1s)
	//   recovery      6s after the last fault ended (stable after 6s)
}

// A report's per-second series, as a table.
func ExampleReport_WriteSeries() {
	report, err := simulation.Run(simulation.Config{
		Duration:   3 * time.Second,
		Rate:       4,
		Dependency: simulation.Outage{From: time.Second, To: 2 * time.Second},
	})
	if err != nil {
		panic(err)
	}
	if err := report.WriteSeries(os.Stdout); err != nil {
		panic(err)
	}
	// Output:
	// second	offered	attempts	served	refused_breaker	refused_budget	failed	probes
	// 0	4	4	4	0	0	0	0
	// 1	4	4	0	0	0	4	0
	// 2	4	4	4	0	0	0	0
}

// Hedging a dependency with a heavy tail (median 20 ms, p99 400 ms): once 20
// successes are measured, an attempt still running at the measured p95 gets a
// second copy, and the first answer wins. The p99 of served calls falls from
// about 400 ms to about 220 ms, for about 4% more attempts: the stage sends
// no more hedges than 1 - 0.95 of the attempts it arms (hedge.Config's
// MaxExtra), and skips the few due beyond that; the delay sits a little under
// the true p95 (166 ms), because the slowest samples it reads are cut short by
// the hedges that beat them, and starts low (see docs/simulation.md).
func ExampleHedge() {
	report, err := simulation.Run(simulation.Config{
		Name:       "hedged",
		Seed:       1,
		Duration:   time.Minute,
		Rate:       100,
		Dependency: simulation.Healthy{P50: 20 * time.Millisecond, P99: 400 * time.Millisecond},
		Client:     simulation.Client{Hedge: &simulation.Hedge{}},
	})
	if err != nil {
		panic(err)
	}
	fmt.Print(report)
	// Output:
	// hedged (seed 1): 1 process(es) x 100 calls/s for 60s
	//   offered       6000
	//   served        6000 (availability 100.00%)
	//   refused       0 by breaker, 0 by budget
	//   failed        0
	//   attempts      6255 (1.042 per call; worst second 29: 1.070)
	//   latency       p50 20.8ms, p90 108.6ms, p99 217.4ms (served calls, end to end)
	//   hedges        255 sent (0.043 per call; median delay 162.1ms), 191 won, 75 skipped
	//   breaker       0 opens, 0 probes (peak 0 per 100ms at 0s)
	//   recovery      no faults
}

// A slow judge shows what a slow-call trip sees. A dependency browned out ten
// times from 40 s: the default breaker, whose threshold is 3 times the median it
// measured while healthy, opens on slow calls about 15 s in, and the judge
// reading its threshold trips on the same call. A threshold that chases the p99
// of the last 30 s finds about 1% of calls slow whatever the dependency does,
// and its trip window never comes near half.
func ExampleSlowJudge() {
	off := breaker.SlowCalls{Disabled: true}
	for _, v := range []struct {
		name    string
		breaker breaker.Config
		judge   simulation.SlowJudge
	}{
		{"median", breaker.Config{}, simulation.SlowJudge{}},
		{"chased p99", breaker.Config{SlowCalls: off}, simulation.SlowJudge{Quantile: 0.99}},
	} {
		r, err := simulation.Run(simulation.Config{
			Seed:       1,
			Duration:   time.Minute,
			Rate:       50,
			Dependency: simulation.Brownout{From: 40 * time.Second, Factor: 10},
			Client:     simulation.Client{Breaker: &v.breaker, SlowJudge: &v.judge},
		})
		if err != nil {
			panic(err)
		}
		fmt.Printf("%s: judged by %s, trip window peak %.3f, tripped %v", v.name, r.SlowJudge, r.PeakSlowFraction, r.SlowTrip)
		if r.BreakerOpens > 0 {
			fmt.Printf("; breaker opened %s into the brownout (%s)", (r.FirstOpen - 40*time.Second).Round(time.Millisecond), r.FirstOpenCause)
		}
		fmt.Println()
	}
	// Output:
	// median: judged by the breaker's threshold, trip window peak 0.509, tripped true; breaker opened 14.028s into the brownout (slow calls)
	// chased p99: judged by p99 of the last 30s, trip window peak 0.074, tripped false
}

// The ramp against the cliff, as the command runs it: one breaker without a
// recovery ramp and one with the default ramp, in front of a dependency that a
// five-second outage (from 30 s to 35 s) leaves cold. ServedIn counts the
// calls offered in the 45 s after the outage that were served: the cliffed
// breaker closes onto the cold dependency, which the full load knocks back,
// and re-opens three times; the ramped one lets it warm, and closes once.
func ExampleScenario() {
	all := simulation.Scenarios()
	s := all[slices.IndexFunc(all, func(s simulation.Scenario) bool { return s.Name == "ramp-vs-cliff" })]
	reports, err := s.Run(simulation.DefaultSeed)
	if err != nil {
		panic(err)
	}
	for _, r := range reports {
		fmt.Printf("%s: served %d, %d opens, %d ramps\n", r.Name, r.ServedIn(35*time.Second, 80*time.Second), r.BreakerOpens, r.Ramps)
	}
	fmt.Print(s.Summary(reports))
	// Output:
	// ramp-vs-cliff/cliff: served 86, 4 opens, 0 ramps
	// ramp-vs-cliff/ramp-alone: served 1028, 1 opens, 1 ramps
	// ramp-vs-cliff/ramp: served 1315, 1 opens, 1 ramps
	// served over the 45s after the outage (calls offered in [35s, 80s) and served, of 1350 offered):
	//   ramp-vs-cliff/cliff       86
	//   ramp-vs-cliff/ramp-alone  1028 (11.95 x the first)
	//   ramp-vs-cliff/ramp      1315 (15.29 x the first)
}

// A grid judges a client against a baseline over outages and loads: here
// the preset against its own retries, after a 10 s outage of a dependency
// that must warm, at 50 calls a second. Retries alone keep the cold
// dependency overloaded; the preset's breaker holds the load off while it
// warms, then hands it back.
func ExampleGrid() {
	card, err := simulation.Preset(standard.Config{})
	if err != nil {
		panic(err)
	}
	g := simulation.Grid{
		Loads:   []float64{50},
		Outages: []time.Duration{10 * time.Second},
		Seeds:   []uint64{1},
		Clients: []simulation.GridClient{{Name: "retries", Client: card.WithoutBreaker()}, {Name: "card", Client: card}},
	}
	r, err := g.Run()
	if err != nil {
		panic(err)
	}
	fmt.Print(r)
	// Output:
	// metastability: 1 cells x 1 seeds x 2 clients of 120s runs; per client: availability, share served in the last 20s, stable after (from the outage's end)
	//   outage   load  retries                   card
	//   10s        50  0.470 0.408 stuck         0.815 1.000 +23s
	// verdict card: PASS: 1 of 1 cells pass; escapes 1 of the 1 cells where the baseline stays stuck
}

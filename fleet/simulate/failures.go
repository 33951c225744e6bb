package simulate

import (
	"fmt"
	"strings"
	"time"

	"github.com/resilience-go/pipeline/simulation"
	"github.com/resilience-go/pipeline/simulation/chart"
)

// The Redis models of the failures.
var (
	// SlowRedis is the slow Redis of the slow-redis case: log-normal round
	// trips of 200 ms median and 1 s p99, of which 9.3% take longer than
	// the round's timeout at the default Refresh (500 ms).
	SlowRedis = simulation.Healthy{P50: 200 * time.Millisecond, P99: time.Second}
	// SteadyRedis answers every round trip in 400 ms, within the timeout.
	SteadyRedis = simulation.Healthy{P50: 400 * time.Millisecond, P99: 400 * time.Millisecond}
	// AbsentRedis refuses every connection (in 1 ms) from 20 s to 40 s, 10 s
	// before the outage of the cases to 10 s into it, and answers at once
	// outside that window.
	AbsentRedis = simulation.Outage{Base: instantRedis{}, From: 20 * time.Second, To: 40 * time.Second}
)

// instantRedis answers every round trip at once: it is its own model and
// its own started dependency, with nothing to draw.
type instantRedis struct{}

func (instantRedis) Start() (simulation.Dependency, error) { return instantRedis{}, nil }

func (instantRedis) Respond(simulation.Attempt) simulation.Response { return simulation.Response{} }

// Failure is one of the fleet's own failures, simulated: runs that differ by
// strategy and by the failure's settings, compared in FailureSummary and
// drawn on one chart.
type Failure struct {
	// Name names the case: its reports' Name and its chart.
	Name string
	// About says in a line what the runs of the case share and how they
	// differ.
	About string
	// Compare, if set, is the label of the run that the case's other runs of
	// its strategy are compared with, process by process, in FailureSummary.
	Compare string
	// Wrongly makes the chart plot the wrongly refused calls per second,
	// rather than the doomed calls.
	Wrongly bool
	// Runs are the case's runs; RunFailures sets their Name, Seed and
	// Processes.
	Runs []Config
}

// Failures are the fleet's own failures: processes restarted during an
// outage, a slow Redis and an absent one during an outage under the uneven
// load (where sharing matters), and a dependency failing for a third of
// the fleet. docs/fleet-failures.md gives their figures.
var Failures = []Failure{
	{
		Name:  "restarts",
		About: "outage 30-50 s, a quarter of the fleet restarted (new ids, fresh breakers) from 35 s to 45 s",
		Runs:  everyStrategy(Config{Situation: Outage, Restart: Restart{Share: 0.25, During: simulation.Interval{From: 35 * time.Second, To: 45 * time.Second}}}),
	},
	{
		Name:    "slow-redis",
		Compare: "quorum, Redis instant",
		About:   "outage 30-50 s, uneven load; Redis slow: 200 ms median, 1 s p99, the timeout 500 ms",
		Runs: []Config{
			{Strategy: Independent, Situation: Outage, Rates: UnevenRates},
			{Strategy: Quorum, Variant: "Redis instant", Situation: Outage, Rates: UnevenRates},
			{Strategy: Quorum, Variant: "Redis 400 ms", Situation: Outage, Rates: UnevenRates, Redis: SteadyRedis},
			{Strategy: Quorum, Variant: "Redis slow", Situation: Outage, Rates: UnevenRates, Redis: SlowRedis},
		},
	},
	{
		Name:    "absent-redis",
		Compare: "quorum, Redis instant",
		About:   "outage 30-50 s, uneven load; Redis absent from 20 s to 40 s",
		Runs: []Config{
			{Strategy: Independent, Situation: Outage, Rates: UnevenRates},
			{Strategy: Quorum, Variant: "Redis instant", Situation: Outage, Rates: UnevenRates},
			{Strategy: Quorum, Variant: "Redis absent", Situation: Outage, Rates: UnevenRates, Redis: AbsentRedis},
		},
	},
	{
		Name:    "zone",
		About:   "the dependency fails every call of a third of the fleet from 30 s to 50 s, and serves the others",
		Wrongly: true,
		Runs: append(everyStrategy(Config{Situation: ZoneOutage}),
			Config{Strategy: Quorum, Variant: "Fraction 0.25", Situation: ZoneOutage, Fraction: 0.25}),
	},
}

// everyStrategy returns c under each of Strategies.
func everyStrategy(c Config) []Config {
	cs := make([]Config, len(Strategies))
	for i, st := range Strategies {
		cs[i] = c
		cs[i].Strategy = st
	}
	return cs
}

// RunFailures runs every run of every failure with seed and a fleet of
// processes (0 means 200), in the order of Failures.
func RunFailures(seed uint64, processes int) ([]*Report, error) {
	var rs []*Report
	for _, f := range Failures {
		for _, c := range f.Runs {
			c.Name, c.Seed, c.Processes = f.Name, seed, processes
			r, err := Run(c)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", f.Name, err)
			}
			rs = append(rs, r)
		}
	}
	return rs, nil
}

// findLabel returns the report of rs named name (the case) whose Label is
// label, or nil.
func findLabel(rs []*Report, name, label string) *Report {
	for _, r := range rs {
		if r.Name == name && r.Label() == label {
			return r
		}
	}
	return nil
}

// reports returns f's reports among rs, in the order of its runs.
func (f Failure) reports(rs []*Report) []*Report {
	var out []*Report
	for _, r := range rs {
		if r.Name == f.Name {
			out = append(out, r)
		}
	}
	return out
}

// FailureSummary compares the reports of RunFailures, case by case: a
// line per run, with its doomed and wrongly refused calls, the times until
// half, nine tenths and all of the breakers the fault reaches had opened,
// and how many of the processes it spared stopped calling; then, for each
// run against the independent breakers, the ratio of their doomed calls
// and until when they made the same calls; against the case's Compare
// run, how much later each breaker opened; the round trips that failed,
// and what the restarted processes did.
func FailureSummary(rs []*Report) string {
	var b strings.Builder
	for _, f := range Failures {
		runs := f.reports(rs)
		if len(runs) == 0 {
			continue
		}
		fmt.Fprintf(&b, "%s: %s\n", f.Name, f.About)
		fmt.Fprintf(&b, "  %-22s %7s %8s %8s %8s %8s %11s\n", "run", "doomed", "wrongly", "50%", "90%", "100%", "spared")
		for _, r := range runs {
			t := r.Totals()
			fmt.Fprintf(&b, "  %-22s %7d %8d", r.Label(), t.Doomed, t.WronglyRefused)
			for _, fr := range stopFractions {
				if d, ok := r.TimeToOpen(fr, true); ok {
					fmt.Fprintf(&b, " %8s", seconds(d))
				} else {
					fmt.Fprintf(&b, " %8s", "never")
				}
			}
			if spared, stopped := r.spared(); spared == 0 {
				fmt.Fprintf(&b, " %11s\n", "-")
			} else {
				fmt.Fprintf(&b, " %11s\n", fmt.Sprintf("%d of %d", stopped, spared))
			}
		}
		ind := findLabel(runs, f.Name, Independent.String())
		base := findLabel(runs, f.Name, f.Compare)
		for _, r := range runs {
			if ind != nil && r != ind {
				fmt.Fprintf(&b, "  %s: doomed calls, independent / it: %.2f; %s\n", r.Label(),
					float64(ind.Totals().Doomed)/float64(max(r.Totals().Doomed, 1)), sameUntil(r, ind))
			}
			if base != nil && r != base && r.Strategy == base.Strategy {
				lo, hi, mean := openedLater(r, base)
				fmt.Fprintf(&b, "  %s: each breaker opened %s to %s later than with %s (%s on average)\n",
					r.Label(), seconds(lo), seconds(hi), base.Variant, seconds(mean))
			}
			if r.Redis != nil {
				fmt.Fprintf(&b, "  %s: rounds failed %d of %d, raising Degraded %d times\n", r.Label(), r.FailedRounds, r.Rounds, r.Degraded)
			}
			if len(r.Restarts) > 0 {
				fmt.Fprintf(&b, "  %s: restarted %s\n", r.Label(), r.restartSummary())
			}
		}
	}
	b.WriteString("(50%, 90%, 100%: when that share of the breakers the fault reaches had opened, after it began;\n" +
		" spared: how many of the processes the fault spared stopped calling)\n")
	return b.String()
}

// sameUntil says until when r made the same calls as ind, second by
// second: "the same calls as independent until 40s", or "throughout".
func sameUntil(r, ind *Report) string {
	for i := range min(len(r.Seconds), len(ind.Seconds)) {
		if r.Seconds[i] != ind.Seconds[i] {
			return fmt.Sprintf("the same calls as independent until %ds", i)
		}
	}
	return "the same calls as independent throughout"
}

// openedLater compares, process by process, when the breakers of r and of
// base first opened (see Opened), over the processes whose breakers opened
// in both: how much later in r, at the least, at the most and on average.
func openedLater(r, base *Report) (lo, hi, mean time.Duration) {
	var sum time.Duration
	n := 0
	for i, o := range r.Opened {
		if o < 0 || base.Opened[i] < 0 {
			continue
		}
		d := o - base.Opened[i]
		if n == 0 {
			lo, hi = d, d
		}
		lo, hi, sum, n = min(lo, d), max(hi, d), sum+d, n+1
	}
	if n > 0 {
		mean = sum / time.Duration(n)
	}
	return lo, hi, mean
}

// Chart draws f's reports among rs: the doomed calls per second (or, with
// Wrongly, the wrongly refused ones), one line per run, over the run's
// Duration, with the fault's window shaded, and the restarts' and Redis's
// faults if any. ok is false when rs holds none of f's reports.
func (f Failure) Chart(rs []*Report) (c chart.Chart, ok bool) {
	title, pick := "doomed calls per second", func(s Second) int { return s.Doomed }
	if f.Wrongly {
		title, pick = "wrongly refused calls per second", func(s Second) int { return s.WronglyRefused }
	}
	c = chart.Chart{Title: f.Name + ": " + title, XLabel: "time (s)", YLabel: "calls per second"}
	var faults []simulation.Interval
	for _, r := range f.reports(rs) {
		c.End = max(c.End, r.Duration.Seconds())
		faults = append(faults, r.namedFault())
		if b, ok := r.restartBand(); ok {
			faults = append(faults, b)
		}
		faults = append(faults, r.redisBands()...)
		v := make([]float64, len(r.Seconds))
		for i, s := range r.Seconds {
			v[i] = float64(pick(s))
		}
		c.Lines = append(c.Lines, chart.Line{Name: r.Label(), Values: v})
	}
	c.Bands = simulation.FaultBands(faults)
	return c, len(c.Lines) > 0
}

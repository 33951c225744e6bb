package simulate

import (
	"fmt"
	"strings"

	"github.com/resilience-go/pipeline/simulation"
	"github.com/resilience-go/pipeline/simulation/chart"
)

// UnevenRates is the uneven load of the scenario's third case: a quarter of
// the fleet at each of 2, 1, 0.5 and 0.25 calls a second.
var UnevenRates = []float64{2, 1, 0.5, 0.25}

// Case is one situation of the scenario, run with every strategy.
type Case struct {
	Name      string
	Situation Situation
	Rates     []float64 // nil: every process at 2 a second
}

// Cases are the scenario's situations: a fleet-wide outage and one sick
// process under an even load, and the outage again under UnevenRates.
var Cases = []Case{
	{Name: "outage", Situation: Outage},
	{Name: "sick-process", Situation: SickProcess},
	{Name: "outage-uneven", Situation: Outage, Rates: UnevenRates},
}

// Scenario runs every strategy in every case with seed, a fleet of
// processes (0 means 200) and the other settings at their
// defaults: case by case, strategies in the order of Strategies.
func Scenario(seed uint64, processes int) ([]*Report, error) {
	var rs []*Report
	for _, c := range Cases {
		for _, st := range Strategies {
			r, err := Run(Config{Name: c.Name, Seed: seed, Strategy: st, Situation: c.Situation, Rates: c.Rates, Processes: processes})
			if err != nil {
				return nil, err
			}
			rs = append(rs, r)
		}
	}
	return rs, nil
}

// Find returns the report of rs named name (the case) for strategy st, or
// nil.
func Find(rs []*Report, name string, st Strategy) *Report {
	for _, r := range rs {
		if r.Name == name && r.Strategy == st {
			return r
		}
	}
	return nil
}

// Summary compares the reports of Scenario, case by case: a table of each
// strategy's doomed and wrongly refused calls, the times until half, nine
// tenths and all of the processes the fault reaches stopped calling, and
// how many of the others stopped; then the ratio of the doomed calls
// without sharing to those with it.
func Summary(rs []*Report) string {
	var b strings.Builder
	for _, c := range Cases {
		ind := Find(rs, c.Name, Independent)
		if ind == nil {
			continue
		}
		fmt.Fprintf(&b, "%s:\n", c.Name)
		fmt.Fprintf(&b, "  %-12s %7s %8s %8s %8s %8s %11s\n", "strategy", "doomed", "wrongly", "50%", "90%", "100%", "spared")
		for _, st := range Strategies {
			r := Find(rs, c.Name, st)
			if r == nil {
				continue
			}
			t := r.Totals()
			fmt.Fprintf(&b, "  %-12s %7d %8d", st, t.Doomed, t.WronglyRefused)
			for _, f := range stopFractions {
				if d, ok := r.TimeToStop(f, true); ok {
					fmt.Fprintf(&b, " %8s", seconds(d))
				} else {
					fmt.Fprintf(&b, " %8s", "never")
				}
			}
			spared, stopped := r.spared()
			if spared == 0 {
				fmt.Fprintf(&b, " %11s\n", "-")
			} else {
				fmt.Fprintf(&b, " %11s\n", fmt.Sprintf("%d of %d", stopped, spared))
			}
		}
		for _, st := range []Strategy{Naive, Quorum} {
			if r := Find(rs, c.Name, st); r != nil && r.Totals().Doomed > 0 {
				fmt.Fprintf(&b, "  doomed calls, independent / %s: %.2f\n", st, float64(ind.Totals().Doomed)/float64(r.Totals().Doomed))
			}
		}
	}
	b.WriteString("(50%, 90%, 100%: when that share of the processes the fault reaches had stopped calling, after it began;\n" +
		" spared: how many of the processes the fault spared stopped calling)\n")
	return b.String()
}

// namedFault returns r's fault, named by its situation when it has no name
// of its own, for its band on a chart: "outage 30-50 s", "sick process
// 30-50 s".
func (r *Report) namedFault() simulation.Interval {
	f := r.Fault
	if f.Name == "" {
		f.Name = strings.ReplaceAll(r.Situation.String(), "-", " ")
	}
	return f
}

// spared returns the number of processes the fault does not reach, and how
// many of them stopped calling all the same.
func (r *Report) spared() (n, stopped int) {
	for i, s := range r.Stops {
		if !r.Reached(i) {
			n++
			if s >= 0 {
				stopped++
			}
		}
	}
	return n, stopped
}

// Charts returns, per case, the doomed calls per second and the wrongly
// refused calls per second, one line per strategy, over the run's Duration
// with the fault's window shaded.
func Charts(rs []*Report) []chart.Chart {
	var cs []chart.Chart
	for _, c := range Cases {
		for _, m := range []struct {
			title string
			pick  func(Second) int
		}{
			{"doomed calls per second", func(s Second) int { return s.Doomed }},
			{"wrongly refused calls per second", func(s Second) int { return s.WronglyRefused }},
		} {
			ch := chart.Chart{Title: c.Name + ": " + m.title, XLabel: "time (s)", YLabel: "calls per second"}
			var faults []simulation.Interval
			for _, st := range Strategies {
				r := Find(rs, c.Name, st)
				if r == nil {
					continue
				}
				ch.End = max(ch.End, r.Duration.Seconds())
				faults = append(faults, r.namedFault())
				v := make([]float64, len(r.Seconds))
				for i, s := range r.Seconds {
					v[i] = float64(m.pick(s))
				}
				ch.Lines = append(ch.Lines, chart.Line{Name: st.String(), Values: v})
			}
			ch.Bands = simulation.FaultBands(faults)
			if len(ch.Lines) > 0 {
				cs = append(cs, ch)
			}
		}
	}
	return cs
}

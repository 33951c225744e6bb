// Command simulate runs the simulation's built-in scenarios (package
// simulation) and prints their reports, and writes an SVG chart per variant
// and per comparison.
//
// Usage:
//
//	go run ./cmd/simulate [-scenario name|all] [-seed n] [-out dir] [-series] [-list]
//
// With no flags it runs every scenario that can run with the default seed and
// writes the charts to ./simulation-out. The same seed always prints the same
// reports and writes the same files.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/resilience-go/pipeline/simulation"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is the command: it parses args, writes the reports to stdout and
// problems to stderr, and returns the exit code.
func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("simulate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	name := fs.String("scenario", "all", "the scenario to run, by name, or all")
	seed := fs.Uint64("seed", simulation.DefaultSeed, "the seed of every random draw")
	out := fs.String("out", "simulation-out", "the directory the SVG charts are written to (empty: no charts)")
	series := fs.Bool("series", false, "also print each run's per-second series")
	list := fs.Bool("list", false, "list the scenarios and exit")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "simulate: unexpected arguments %q\n", fs.Args())
		return 2
	}
	all := scenarios()
	if *list {
		for _, s := range all {
			status := ""
			if s.pending != "" {
				status = " [pending: " + s.pending + "]"
			}
			fmt.Fprintf(stdout, "%-20s %s%s\n", s.name, s.claim, status)
		}
		return 0
	}

	chosen := all
	if *name != "all" {
		chosen = nil
		for _, s := range all {
			if s.name == *name {
				chosen = append(chosen, s)
			}
		}
		if len(chosen) == 0 {
			fmt.Fprintf(stderr, "simulate: no scenario %q (see -list)\n", *name)
			return 2
		}
		if p := chosen[0].pending; p != "" {
			fmt.Fprintf(stderr, "simulate: scenario %s cannot run yet: %s\n", *name, p)
			return 2
		}
	}
	if *out != "" {
		if err := os.MkdirAll(*out, 0o755); err != nil {
			fmt.Fprintf(stderr, "simulate: %v\n", err)
			return 1
		}
	}
	for _, s := range chosen {
		if err := runScenario(s, *seed, *out, *series, stdout); err != nil {
			fmt.Fprintf(stderr, "simulate: %v\n", err)
			return 1
		}
	}
	return 0
}

// report is what the command needs of a variant's report: a
// simulation.Report or a simulation.LimitReport.
type report interface {
	String() string
	WriteSeries(io.Writer) error
	Chart() simulation.Chart
}

// scenario is a simulation.Scenario or a simulation.LimitScenario, as the
// command runs it: run returns the reports, the summary and the comparison
// charts.
type scenario struct {
	name, claim, pending string
	run                  func(seed uint64) ([]report, string, []simulation.Chart, error)
}

// scenarios returns every built-in scenario, the calls' first, then the
// concurrency limits'.
func scenarios() []scenario {
	var all []scenario
	for _, s := range simulation.Scenarios() {
		all = append(all, scenario{s.Name, s.Claim, s.Pending, func(seed uint64) ([]report, string, []simulation.Chart, error) {
			rs, err := s.Run(seed)
			return collect(rs, s.Summary, s.Compare, err)
		}})
	}
	for _, s := range simulation.LimitScenarios() {
		all = append(all, scenario{s.Name, s.Claim, "", func(seed uint64) ([]report, string, []simulation.Chart, error) {
			rs, err := s.Run(seed)
			return collect(rs, s.Summary, s.Compare, err)
		}})
	}
	return all
}

// collect turns a scenario's reports into what runScenario prints.
func collect[R report](rs []R, summary func([]R) string, compare func([]R) []simulation.Chart, err error) ([]report, string, []simulation.Chart, error) {
	if err != nil {
		return nil, "", nil, err
	}
	out := make([]report, len(rs))
	for i, r := range rs {
		out[i] = r
	}
	var text string
	if summary != nil {
		text = summary(rs)
	}
	var charts []simulation.Chart
	if compare != nil {
		charts = compare(rs)
	}
	return out, text, charts, nil
}

// runScenario runs s, prints its reports and writes its charts to dir.
func runScenario(s scenario, seed uint64, dir string, series bool, w io.Writer) error {
	fmt.Fprintf(w, "== %s: %s\n", s.name, s.claim)
	if s.pending != "" {
		fmt.Fprintf(w, "   pending: %s\n\n", s.pending)
		return nil
	}
	reports, summary, compared, err := s.run(seed)
	if err != nil {
		return err
	}
	var charts []simulation.Chart
	for _, r := range reports {
		fmt.Fprintln(w, r)
		if series {
			if err := r.WriteSeries(w); err != nil {
				return err
			}
			fmt.Fprintln(w)
		}
		charts = append(charts, r.Chart())
	}
	if summary != "" {
		fmt.Fprintln(w, summary)
	}
	for _, c := range compared {
		c.Title = s.name + ": " + c.Title
		charts = append(charts, c)
	}
	if dir == "" {
		return nil
	}
	for _, c := range charts {
		path, err := c.WriteSVGFile(dir)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "   wrote %s\n", path)
	}
	fmt.Fprintln(w)
	return nil
}

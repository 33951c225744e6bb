// Command simulate runs the simulation's built-in scenarios (package
// simulation) and prints their reports, and writes an SVG chart per variant
// and per comparison, and one HTML page of them all, index.html.
//
// Usage:
//
//	go run ./cmd/simulate [-scenario name|all] [-seed n] [-out dir] [-series] [-list]
//
// With no flags it runs every scenario that can run with the default seed and
// writes the charts to ./simulation-out, with ./simulation-out/index.html: a
// self-contained page (no script, nothing fetched) of every scenario's claim,
// result, figures and charts, the charts inlined. The same seed always prints
// the same reports and writes the same files.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/resilience-go/pipeline/simulation"
	"github.com/resilience-go/pipeline/simulation/chart"
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
	out := fs.String("out", "simulation-out", "the directory the SVG charts and index.html are written to (empty: neither)")
	series := fs.Bool("series", false, "also print each run's per-second series")
	list := fs.Bool("list", false, "list the scenarios and exit")
	arrivals := fs.String("arrivals", "even", "how calls arrive in the scenarios of calls and the grids: even or poisson")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "simulate: unexpected arguments %q\n", fs.Args())
		return 2
	}
	var a simulation.Arrivals
	switch *arrivals {
	case "even":
	case "poisson":
		a = simulation.Poisson
	default:
		fmt.Fprintf(stderr, "simulate: -arrivals must be even or poisson, got %q\n", *arrivals)
		return 2
	}
	all := scenarios(a)
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
	pg := page{Seed: *seed, Arrivals: *arrivals}
	for _, s := range chosen {
		sec, err := runScenario(s, *seed, *out, *series, stdout)
		if err != nil {
			fmt.Fprintf(stderr, "simulate: %v\n", err)
			return 1
		}
		pg.Sections = append(pg.Sections, sec)
	}
	if *out != "" {
		path, err := writePage(*out, pg)
		if err != nil {
			fmt.Fprintf(stderr, "simulate: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "wrote %s\n", path)
	}
	return 0
}

// report is what the command needs of a variant's report, a
// simulation.Report.
type report interface {
	String() string
	WriteSeries(io.Writer) error
	Chart() chart.Chart
}

// picture is a chart.Chart or a chart.HeatMap: what the command
// writes to a file, and inlines in the page.
type picture interface {
	WriteSVGFile(dir string) (string, error)
}

// scenario is a simulation.Scenario or a simulation.Grid, as the command runs it: run returns the reports, the
// summary and the comparison pictures.
type scenario struct {
	name, claim, pending string
	run                  func(seed uint64) ([]report, string, []picture, error)
}

// scenarios returns every built-in scenario, the calls' first (the
// concurrency limits' last of them), then the metastability grids; a is
// how the calls of every one arrive.
func scenarios(a simulation.Arrivals) []scenario {
	var all []scenario
	for _, s := range simulation.Scenarios() {
		s = s.Under(a)
		all = append(all, scenario{s.Name, s.Claim, s.Pending, func(seed uint64) ([]report, string, []picture, error) {
			rs, err := s.Run(seed)
			return collect(s.Name, rs, s.Summary, s.Compare, err)
		}})
	}
	for _, g := range []struct {
		name, claim string
		arrivals    simulation.Arrivals
	}{
		{"metastability", "the preset's card is never worse than its retries alone after an outage of a dependency that must warm, at loads 30 to 90 of a capacity of 100, and escapes the outages retries alone never recover from", simulation.Even},
		{"metastability-bursts", "the same grid under Poisson arrivals: the card escapes what retries alone cannot, and its hedge can tip a dependency its bursts take near its capacity", simulation.Poisson},
	} {
		arrive := g.arrivals
		if a != simulation.Even {
			arrive = a
		}
		all = append(all, scenario{g.name, g.claim, "", func(seed uint64) ([]report, string, []picture, error) {
			grid := simulation.MetastabilityGrid(arrive)
			grid.Name = g.name
			if seed != simulation.DefaultSeed {
				grid.Seeds = []uint64{seed, seed + 1, seed + 2}
			}
			r, err := grid.Run()
			if err != nil {
				return nil, "", nil, err
			}
			var maps []picture
			for _, h := range r.HeatMaps() {
				maps = append(maps, h)
			}
			return nil, r.String(), maps, nil
		}})
	}
	return all
}

// collect turns a scenario's reports into what runScenario prints, the
// comparison charts' titles led by the scenario's name.
func collect[R report](name string, rs []R, summary func([]R) string, compare func([]R) []chart.Chart, err error) ([]report, string, []picture, error) {
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
	var charts []picture
	if compare != nil {
		for _, c := range compare(rs) {
			c.Title = name + ": " + c.Title
			charts = append(charts, c)
		}
	}
	return out, text, charts, nil
}

// runScenario runs s, prints its reports, writes its charts to dir and
// returns its section of the page (its figures only when dir is set).
func runScenario(s scenario, seed uint64, dir string, series bool, w io.Writer) (section, error) {
	sec := section{Name: s.name, Claim: s.claim, Pending: s.pending}
	fmt.Fprintf(w, "== %s: %s\n", s.name, s.claim)
	if s.pending != "" {
		fmt.Fprintf(w, "   pending: %s\n\n", s.pending)
		return sec, nil
	}
	reports, summary, compared, err := s.run(seed)
	if err != nil {
		return sec, err
	}
	var charts []picture
	for _, r := range reports {
		fmt.Fprintln(w, r)
		sec.Reports = append(sec.Reports, r.String())
		if series {
			if err := r.WriteSeries(w); err != nil {
				return sec, err
			}
			fmt.Fprintln(w)
		}
		charts = append(charts, r.Chart())
	}
	if summary != "" {
		fmt.Fprintln(w, summary)
		sec.Result = summary
	}
	charts = append(charts, compared...)
	if dir == "" {
		return sec, nil
	}
	for _, c := range charts {
		path, err := c.WriteSVGFile(dir)
		if err != nil {
			return sec, err
		}
		fmt.Fprintf(w, "   wrote %s\n", path)
		fig, err := newFigure(path)
		if err != nil {
			return sec, err
		}
		sec.Figures = append(sec.Figures, fig)
	}
	fmt.Fprintln(w)
	return sec, nil
}

// Command simulate runs the fleet scenario of package fleet/simulate: 200
// client processes, each with its own breaker, sharing nothing, sharing one
// state naively, or sharing by the fleet's quorum, against a fleet-wide
// outage and against one sick process. It prints each run's report and the
// comparison, and writes an SVG chart of the doomed calls and one of the
// wrongly refused calls per second for each case.
//
// It then runs the fleet's own failures (simulate.Failures): processes
// restarted during the outage, a slow Redis, an absent Redis, and the
// dependency failing for a third of the fleet. It prints their reports and
// their comparison, and writes one chart per failure,
// fleet-failure-<name>.svg (docs/fleet-failures.md shows them).
//
// Usage, from the fleet module:
//
//	go run ./cmd/simulate [-seed n] [-processes n] [-out dir]
//
// The same seed always prints the same text and writes the same files.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/resilience-go/pipeline/fleet/simulate"
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
	seed := fs.Uint64("seed", simulation.DefaultSeed, "the seed of every random draw")
	processes := fs.Int("processes", 0, "the size of the fleet (0: the simulation's, 200)")
	out := fs.String("out", "simulation-out", "the directory the SVG charts are written to (empty: no charts)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "simulate: unexpected arguments %q\n", fs.Args())
		return 2
	}
	if err := simulateAll(*seed, *processes, *out, stdout); err != nil {
		fmt.Fprintf(stderr, "simulate: %v\n", err)
		return 1
	}
	return 0
}

// simulateAll runs the scenario and the failures, prints them to stdout
// and, unless out is empty, writes their charts to out.
func simulateAll(seed uint64, processes int, out string, stdout io.Writer) error {
	rs, err := simulate.Scenario(seed, processes)
	if err != nil {
		return err
	}
	for _, r := range rs {
		fmt.Fprintln(stdout, r)
	}
	fmt.Fprintln(stdout, simulate.Summary(rs))
	fs, err := simulate.RunFailures(seed, processes)
	if err != nil {
		return err
	}
	for _, r := range fs {
		fmt.Fprintln(stdout, r)
	}
	fmt.Fprintln(stdout, simulate.FailureSummary(fs))
	if out == "" {
		return nil
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	for _, c := range simulate.Charts(rs) {
		c.Title = "fleet " + c.Title
		path, err := c.WriteSVGFile(out)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "wrote %s\n", path)
	}
	for _, f := range simulate.Failures {
		c, ok := f.Chart(fs)
		if !ok {
			continue
		}
		c.Title = "fleet failure " + c.Title
		path := filepath.Join(out, "fleet-failure-"+f.Name+".svg")
		if err := writeSVG(path, c); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "wrote %s\n", path)
	}
	return nil
}

// writeSVG writes c to the file at path.
func writeSVG(path string, c chart.Chart) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, f.Close()) }()
	return c.WriteSVG(f)
}

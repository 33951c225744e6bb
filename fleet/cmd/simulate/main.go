// Command simulate runs the fleet scenario of package fleet/simulate: 200
// client processes, each with its own breaker, sharing nothing, sharing one
// state naively, or sharing by the fleet's quorum, against a fleet-wide
// outage and against one sick process. It prints each run's report and the
// comparison, and writes an SVG chart of the doomed calls and one of the
// wrongly refused calls per second for each case.
//
// Usage, from the fleet module:
//
//	go run ./cmd/simulate [-seed n] [-processes n] [-out dir]
//
// The same seed always prints the same text and writes the same files.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/resilience-go/pipeline/fleet/simulate"
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
	seed := fs.Uint64("seed", simulation.DefaultSeed, "the seed of every random draw")
	processes := fs.Int("processes", simulate.DefaultProcesses, "the size of the fleet")
	out := fs.String("out", "simulation-out", "the directory the SVG charts are written to (empty: no charts)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "simulate: unexpected arguments %q\n", fs.Args())
		return 2
	}
	rs, err := simulate.Scenario(*seed, *processes)
	if err != nil {
		fmt.Fprintf(stderr, "simulate: %v\n", err)
		return 1
	}
	for _, r := range rs {
		fmt.Fprintln(stdout, r)
	}
	fmt.Fprintln(stdout, simulate.Summary(rs))
	if *out == "" {
		return 0
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		fmt.Fprintf(stderr, "simulate: %v\n", err)
		return 1
	}
	for _, c := range simulate.Charts(rs) {
		c.Title = "fleet " + c.Title
		path, err := c.WriteSVGFile(*out)
		if err != nil {
			fmt.Fprintf(stderr, "simulate: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "wrote %s\n", path)
	}
	return 0
}

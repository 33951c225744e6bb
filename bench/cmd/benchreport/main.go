// Command benchreport runs the side-by-side benchmarks of the bench module
// several times and prints, as markdown, a table of medians (ns/op, B/op,
// allocs/op) with the ratios ours/peer and ours/floor, the target of each of our
// rows and whether it is met; then the core pipeline's own overhead and its
// per-stage slope, from the root package's benchmarks.
//
// Run it from the bench directory:
//
//	go run ./cmd/benchreport            # 6 runs of everything
//	go run ./cmd/benchreport -count 10 -raw out.txt
//	go run ./cmd/benchreport -in out.txt  # re-render saved output, run nothing
//
// The raw output (-raw) is ordinary `go test -bench` output, ready for
// benchstat. Medians and their 95% confidence intervals are computed with
// golang.org/x/perf/benchmath, as benchstat computes them.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"
)

func main() {
	count := flag.Int("count", 6, "runs of each benchmark (go test -count)")
	benchtime := flag.String("benchtime", "", "go test -benchtime (empty: go test's default, 1s)")
	bench := flag.String("bench", ".", "go test -bench pattern for the side-by-side benchmarks")
	core := flag.Bool("core", true, "also run the root package's Execute and Direct benchmarks")
	root := flag.String("root", "..", "directory of the root module, for -core")
	raw := flag.String("raw", "", "file to write the raw benchmark output to")
	in := flag.String("in", "", "read benchmark output from this file instead of running anything")
	flag.Parse()
	if err := run(*count, *benchtime, *bench, *core, *root, *raw, *in, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "benchreport:", err)
		os.Exit(1)
	}
}

func run(count int, benchtime, pattern string, core bool, root, raw, in string, w io.Writer) error {
	if count < 1 {
		return fmt.Errorf("-count must be at least 1, got %d", count)
	}
	var side, coreOut []byte
	var cmds []string
	if in != "" {
		b, err := os.ReadFile(in)
		if err != nil {
			return err
		}
		side, coreOut = splitCore(b)
	} else {
		args := testArgs(count, benchtime, pattern)
		cmds = append(cmds, "cd bench && go "+strings.Join(quote(args), " "))
		var err error
		if side, err = goTest(".", args); err != nil {
			return err
		}
		if core {
			args := testArgs(count, benchtime, "Execute|Direct")
			cmds = append(cmds, "go "+strings.Join(quote(args), " ")+"   # at the repository root")
			if coreOut, err = goTest(root, args); err != nil {
				return err
			}
		}
		if raw != "" {
			all := append(append(append([]byte{}, side...), coreMarker...), coreOut...)
			if err := os.WriteFile(raw, all, 0o644); err != nil {
				return err
			}
		}
	}

	rs, err := parse(bytes.NewReader(side))
	if err != nil {
		return err
	}
	if len(rs.order) == 0 {
		return fmt.Errorf("no benchmark results in the output")
	}
	fmt.Fprintf(w, "Measured %s with %s on %s.\n", time.Now().Format("2006-01-02"), runtime.Version(), machine())
	for _, c := range cmds {
		fmt.Fprintf(w, "\n    %s", c)
	}
	fmt.Fprintf(w, "\n\nMedians of %d runs; ± is the half-width of the 95%% confidence interval of the median.\n\n", rs.rows[rs.order[0]].runs)
	writeTable(w, rs)
	if len(coreOut) > 0 {
		crs, err := parse(bytes.NewReader(coreOut))
		if err != nil {
			return err
		}
		fmt.Fprintln(w, "\nThe core pipeline's own cost (root package):")
		fmt.Fprintln(w)
		writeCore(w, crs)
	}
	return nil
}

// coreMarker separates the side-by-side output from the root package's in a raw
// file, so that -in can render both.
var coreMarker = []byte("\n# benchreport: root package\n")

func splitCore(b []byte) (side, core []byte) {
	if i := bytes.Index(b, coreMarker); i >= 0 {
		return b[:i], b[i+len(coreMarker):]
	}
	return b, nil
}

func testArgs(count int, benchtime, pattern string) []string {
	args := []string{"test", "-run", "^$", "-bench", pattern, "-benchmem", "-count", fmt.Sprint(count)}
	if benchtime != "" {
		args = append(args, "-benchtime", benchtime)
	}
	return append(args, ".")
}

// goTest runs go with args in dir, echoing its output to stderr as it comes,
// and returns the output.
func goTest(dir string, args []string) ([]byte, error) {
	var out bytes.Buffer
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Stdout = io.MultiWriter(&out, os.Stderr)
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("go %s in %s: %w", strings.Join(args, " "), dir, err)
	}
	return out.Bytes(), nil
}

func quote(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if strings.ContainsAny(a, "^$|*? ") {
			a = "'" + a + "'"
		}
		out[i] = a
	}
	return out
}

// machine describes the CPU count and model, read from /proc/cpuinfo when there
// is one.
func machine() string {
	model := runtime.GOARCH
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
	}
	return fmt.Sprintf("%d CPUs (%s), GOMAXPROCS %d", runtime.NumCPU(), model, runtime.GOMAXPROCS(0))
}

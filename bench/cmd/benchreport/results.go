package main

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchmath"
)

// stat is the median of one measurement over a benchmark's runs, with the
// bounds of its 95% confidence interval as benchstat computes them.
type stat struct {
	center, lo, hi float64
}

// spread is the half-width of the confidence interval as a fraction of the
// median, the "±" benchstat prints; 0 when the median is 0.
func (s stat) spread() float64 {
	if s.center == 0 {
		return 0
	}
	return max(s.hi-s.center, s.center-s.lo) / s.center
}

// row is one benchmark: its name without the "Benchmark" prefix and the
// GOMAXPROCS suffix, e.g. "Breaker/ok/ours", and the medians of its runs.
type row struct {
	name   string
	runs   int
	ns     stat // nanoseconds per operation
	bytes  stat // bytes allocated per operation
	allocs stat // allocations per operation
}

// group is the name without its last element ("Breaker/ok"), and lib the last
// element ("ours", "gobreaker", ...).
func (r row) group() string {
	i := strings.LastIndexByte(r.name, '/')
	if i < 0 {
		return ""
	}
	return r.name[:i]
}

func (r row) lib() string { return r.name[strings.LastIndexByte(r.name, '/')+1:] }

// results holds the rows of one benchmark output in the order they first
// appeared, indexed by name.
type results struct {
	order []string
	rows  map[string]*row
}

func (rs *results) get(name string) (*row, bool) {
	r, ok := rs.rows[name]
	return r, ok
}

// parse reads Go benchmark output and summarises every benchmark's runs by
// their medians. Lines that are not benchmark results are ignored.
func parse(in io.Reader) (*results, error) {
	type values struct{ ns, bytes, allocs []float64 }
	var order []string
	all := map[string]*values{}
	rd := benchfmt.NewReader(in, "benchmarks")
	for rd.Scan() {
		res, ok := rd.Result().(*benchfmt.Result)
		if !ok {
			continue // unit metadata, or a syntax error in a non-benchmark line
		}
		name := shortName(res.Name)
		v := all[name]
		if v == nil {
			v = &values{}
			all[name] = v
			order = append(order, name)
		}
		sec, ok := res.Value("sec/op")
		if !ok {
			return nil, fmt.Errorf("benchmark %s has no ns/op", name)
		}
		v.ns = append(v.ns, sec*1e9)
		if b, ok := res.Value("B/op"); ok {
			v.bytes = append(v.bytes, b)
		}
		if a, ok := res.Value("allocs/op"); ok {
			v.allocs = append(v.allocs, a)
		}
	}
	if err := rd.Err(); err != nil {
		return nil, err
	}
	rs := &results{order: order, rows: map[string]*row{}}
	for _, name := range order {
		v := all[name]
		rs.rows[name] = &row{name: name, runs: len(v.ns), ns: summarize(v.ns), bytes: summarize(v.bytes), allocs: summarize(v.allocs)}
	}
	return rs, nil
}

// shortName drops the GOMAXPROCS suffix from a benchmark name.
func shortName(n benchfmt.Name) string {
	base, parts := n.Parts()
	var b bytes.Buffer
	b.Write(base)
	for _, p := range parts {
		if len(p) > 0 && p[0] == '-' {
			continue
		}
		b.Write(p)
	}
	return b.String()
}

// summarize is the median and its 95% confidence interval, making no
// assumption about the distribution (as benchstat does by default).
func summarize(vs []float64) stat {
	if len(vs) == 0 {
		return stat{}
	}
	s := benchmath.AssumeNothing.Summary(benchmath.NewSample(vs, &benchmath.DefaultThresholds), 0.95)
	return stat{center: s.Center, lo: s.Lo, hi: s.Hi}
}

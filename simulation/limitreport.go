package simulation

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/resilience-go/pipeline/simulation/chart"

	"github.com/resilience-go/pipeline/criticality"
)

// LimitReport is what a [RunLimit] run did. Calls are counted once, in the
// second they were offered, by how they ended, so
// Offered = Served + Refused + TimedOut + Failed.
type LimitReport struct {
	// Name, Seed, Rate and Duration are the run's configuration; Limiter says
	// what limited it ("bulkhead of 16", "adaptive limit", "no limit").
	Name     string
	Seed     uint64
	Rate     float64
	Duration time.Duration
	Limiter  string
	// Faults are the model's scheduled faults.
	Faults []Interval
	// Offered, Served, Refused (by the limit), TimedOut (cut at the
	// client's Timeout) and Failed (any other answer) count calls.
	Offered, Served, Refused, TimedOut, Failed int
	// P50 and P99 are nearest-rank quantiles of the latency of served calls.
	P50, P99 time.Duration
	// Seconds is the per-second series.
	Seconds []LimitSecond
	// Levels counts the calls of each criticality level apart, indexed by
	// level (Levels[criticality.Critical]); Levels[0] is the unmarked calls.
	Levels [criticality.Levels + 1]LevelCount

	latencies []time.Duration   // of served calls, sorted by finish
	secLat    [][]time.Duration // of served calls, by the second they were offered
}

// LimitSecond is one second of a limit run: calls by the second they were
// offered; Limit and Held as the second saw them.
type LimitSecond struct {
	Offered, Served, Refused, TimedOut, Failed int
	// Limit is the adaptive limit after the last call that ended in the
	// second (carried over from the second before if none did); the fixed
	// limit for a bulkhead; 0 without a limit.
	Limit int
	// Held is the most attempts the dependency held at once in the second,
	// working or queued inside it, including those the client no longer
	// waits for.
	Held int
	// P50 is the median latency of the second's served calls (0 if none).
	P50 time.Duration
	// LevelServed counts the second's served calls by level, as
	// LimitReport.Levels is indexed.
	LevelServed [criticality.Levels + 1]int
}

// LevelCount is the count of one level's calls in a limit run.
type LevelCount struct {
	Offered, Served, Refused, TimedOut, Failed int
	// P99 is the nearest-rank 99th percentile of the latency of the level's
	// served calls.
	P99 time.Duration

	latencies []time.Duration
}

// levelOf is the count of level l.
func (r *LimitReport) levelOf(l criticality.Level) *LevelCount { return &r.Levels[l] }

// second returns the second that holds t, growing the series to it.
func (r *LimitReport) second(t time.Duration) *LimitSecond {
	i := int(t / time.Second)
	for len(r.Seconds) <= i {
		r.Seconds = append(r.Seconds, LimitSecond{})
		r.secLat = append(r.secLat, nil)
	}
	return &r.Seconds[i]
}

// perSecond records the latency d of a call offered at t and served.
func (r *LimitReport) perSecond(t, d time.Duration) {
	r.second(t)
	i := int(t / time.Second)
	r.secLat[i] = append(r.secLat[i], d)
}

// finish totals the run.
func (r *LimitReport) finish() {
	limited := strings.HasPrefix(r.Limiter, "bulkhead of ")
	var fixed int
	if limited {
		_, _ = fmt.Sscanf(r.Limiter, "bulkhead of %d", &fixed)
	}
	last := 0
	for i := range r.Seconds {
		s := &r.Seconds[i]
		r.Offered += s.Offered
		r.Served += s.Served
		r.Refused += s.Refused
		r.TimedOut += s.TimedOut
		r.Failed += s.Failed
		switch {
		case limited:
			s.Limit = fixed
		case s.Limit == 0:
			s.Limit = last
		}
		last = s.Limit
		lat := slices.Sorted(slices.Values(r.secLat[i]))
		s.P50 = rank(lat, 0.5)
	}
	all := slices.Sorted(slices.Values(r.latencies))
	r.P50, r.P99 = rank(all, 0.5), rank(all, 0.99)
	r.secLat = nil
	for i := range r.Levels {
		lv := &r.Levels[i]
		lv.P99 = rank(slices.Sorted(slices.Values(lv.latencies)), 0.99)
		lv.latencies = nil
	}
}

// ServedIn counts the calls offered in [from, to), by whole seconds, that were
// served.
func (r *LimitReport) ServedIn(from, to time.Duration) int {
	n := 0
	for i := int(from / time.Second); i < int(to/time.Second) && i < len(r.Seconds); i++ {
		n += r.Seconds[i].Served
	}
	return n
}

// OfferedIn counts the calls offered in [from, to), by whole seconds.
func (r *LimitReport) OfferedIn(from, to time.Duration) int {
	n := 0
	for i := int(from / time.Second); i < int(to/time.Second) && i < len(r.Seconds); i++ {
		n += r.Seconds[i].Offered
	}
	return n
}

// String renders the summary as stable text.
func (r *LimitReport) String() string {
	var b strings.Builder
	name := r.Name
	if name == "" {
		name = "run"
	}
	fmt.Fprintf(&b, "%s (seed %d): %s calls/s for %s through %s\n", name, r.Seed, number(r.Rate), seconds(r.Duration), r.Limiter)
	fmt.Fprintf(&b, "  offered       %d\n", r.Offered)
	fmt.Fprintf(&b, "  served        %d (availability %.2f%%)\n", r.Served, 100*ratio(r.Served, r.Offered))
	fmt.Fprintf(&b, "  refused       %d by the limit\n", r.Refused)
	fmt.Fprintf(&b, "  timed out     %d, failed %d\n", r.TimedOut, r.Failed)
	fmt.Fprintf(&b, "  latency       p50 %s, p99 %s (served calls)\n", millis(r.P50), millis(r.P99))
	for l := criticality.Sheddable; l <= criticality.Critical; l++ {
		if lv := r.Levels[l]; lv.Offered > 0 {
			fmt.Fprintf(&b, "  %-13s %d offered, %d served (%.2f%%), %d refused, %d timed out, %d failed, p99 %s\n",
				l, lv.Offered, lv.Served, 100*ratio(lv.Served, lv.Offered), lv.Refused, lv.TimedOut, lv.Failed, millis(lv.P99))
		}
	}
	for _, f := range r.Faults {
		if f.To == 0 {
			continue
		}
		during, after := r.ServedIn(f.From, f.To), r.ServedIn(f.To, f.To+(f.To-f.From))
		fmt.Fprintf(&b, "  fault         %s to %s: %d of %d served during it, %d of %d in as long after it\n",
			seconds(f.From), seconds(f.To), during, r.OfferedIn(f.From, f.To), after, r.OfferedIn(f.To, f.To+(f.To-f.From)))
	}
	return b.String()
}

// WriteSeries writes the per-second series as a tab-separated table with a
// header line.
func (r *LimitReport) WriteSeries(w io.Writer) error {
	var b strings.Builder
	b.WriteString("second\toffered\tserved\trefused\ttimed_out\tfailed\tlimit\theld\tp50_ms\n")
	for i, s := range r.Seconds {
		fmt.Fprintf(&b, "%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%.1f\n", i, s.Offered, s.Served, s.Refused, s.TimedOut, s.Failed,
			s.Limit, s.Held, float64(s.P50)/float64(time.Millisecond))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Chart returns a chart of r's per-second series: offered, served, refused
// and timed-out calls, the limit and what the dependency held, over the
// run's Duration with the dependency's faults shaded.
func (r *LimitReport) Chart() chart.Chart {
	pick := func(f func(LimitSecond) int) []float64 {
		v := make([]float64, len(r.Seconds))
		for i, s := range r.Seconds {
			v[i] = float64(f(s))
		}
		return v
	}
	title := r.Name
	if title == "" {
		title = "run"
	}
	return chart.Chart{Title: title, XLabel: "time (s)", YLabel: "per second, or calls", End: r.Duration.Seconds(), Bands: FaultBands(r.Faults), Lines: []chart.Line{
		{Name: "offered", Values: pick(func(s LimitSecond) int { return s.Offered })},
		{Name: "served", Values: pick(func(s LimitSecond) int { return s.Served })},
		{Name: "refused", Values: pick(func(s LimitSecond) int { return s.Refused })},
		{Name: "timed out", Values: pick(func(s LimitSecond) int { return s.TimedOut })},
		{Name: "limit", Values: pick(func(s LimitSecond) int { return s.Limit })},
		{Name: "held by the dependency", Values: pick(func(s LimitSecond) int { return s.Held })},
	}}
}

// compareLimits overlays one per-second series of every report, over the
// runs' time with their faults shaded.
func compareLimits(title, ylabel string, rs []*LimitReport, series func(LimitSecond) float64) chart.Chart {
	c := chart.Chart{Title: title, XLabel: "time (s)", YLabel: ylabel}
	var durations []time.Duration
	var faults []Interval
	for _, r := range rs {
		v := make([]float64, len(r.Seconds))
		for i, s := range r.Seconds {
			v[i] = series(s)
		}
		c.Lines = append(c.Lines, chart.Line{Name: r.Name, Values: v})
		durations = append(durations, r.Duration)
		faults = append(faults, r.Faults...)
	}
	return overRuns(c, durations, faults)
}

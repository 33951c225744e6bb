package simulation

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/resilience-go/pipeline/simulation/chart"
)

// FaultBands returns a band per fault, on an x axis of seconds, sorted by
// start, each named by the fault and its window: "outage 30-35 s" for
// Interval{From: 30 * time.Second, To: 35 * time.Second, Name: "outage"},
// "fault from 30 s" for a fault without a name that never ends. Faults that
// are the same interval with the same name give one band. When more than
// three faults share a name, their bands share one too, such as
// "outage, 38 times, 120-3451 s", so the legend names them once.
func FaultBands(faults []Interval) []chart.Band {
	var bands []chart.Band
	var names []string // each band's fault's name
	for _, f := range faults {
		name := cmp.Or(f.Name, "fault")
		b := chart.Band{Name: name + " " + chart.Label(f.From.Seconds()) + "-" + chart.Label(f.To.Seconds()) + " s", From: f.From.Seconds(), To: f.To.Seconds()}
		if f.To == 0 {
			b.Name, b.To = name+" from "+chart.Label(f.From.Seconds())+" s", math.Inf(1)
		}
		if !slices.Contains(bands, b) {
			bands, names = append(bands, b), append(names, name)
		}
	}
	nameRepeats(bands, names)
	slices.SortStableFunc(bands, func(a, b chart.Band) int { return cmp.Or(cmp.Compare(a.From, b.From), cmp.Compare(a.To, b.To)) })
	return bands
}

// faultsNamedApart is the most faults of one name that FaultBands names one
// by one.
const faultsNamedApart = 3

// nameRepeats gives the bands of each fault name that more than
// faultsNamedApart of them have (names[i] is band i's) one name for them all:
// the fault's name, how many there are and the stretch they span.
func nameRepeats(bands []chart.Band, names []string) {
	for _, name := range slices.Compact(slices.Sorted(slices.Values(names))) {
		var same []int
		for i, n := range names {
			if n == name {
				same = append(same, i)
			}
		}
		if len(same) <= faultsNamedApart {
			continue
		}
		from, to := math.Inf(1), 0.0
		for _, i := range same {
			from, to = min(from, bands[i].From), max(to, bands[i].To)
		}
		group := fmt.Sprintf("%s, %d times, %s-%s s", name, len(same), chart.Label(from), chart.Label(to))
		if math.IsInf(to, 1) {
			group = fmt.Sprintf("%s, %d times, from %s s", name, len(same), chart.Label(from))
		}
		for _, i := range same {
			bands[i].Name = group
		}
	}
}

// Chart returns a chart of r's per-second series: offered, attempts, served,
// refused and failed calls, probes, hedges when the run hedged, and slow
// samples when it had a slow judge, and timed-out calls, the limit and what
// the dependency held when it had a limit, over the run's Duration, with
// the dependency's faults shaded.
func (r *Report) Chart() chart.Chart {
	pick := func(f func(Second) int) []float64 {
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
	lines := []chart.Line{
		{Name: "offered", Values: pick(func(s Second) int { return s.Offered })},
		{Name: "attempts", Values: pick(func(s Second) int { return s.Attempts })},
		{Name: "served", Values: pick(func(s Second) int { return s.Served })},
		{Name: "refused", Values: pick(func(s Second) int { return s.RefusedByBreaker + s.RefusedByBudget + s.RefusedByLimit })},
		{Name: "failed", Values: pick(func(s Second) int { return s.Failed })},
		{Name: "probes", Values: pick(func(s Second) int { return s.Probes })},
	}
	if r.Hedging {
		lines = append(lines, chart.Line{Name: "hedges", Values: pick(func(s Second) int { return s.Hedges })})
	}
	if r.SlowJudge != nil {
		lines = append(lines, chart.Line{Name: "slow", Values: pick(func(s Second) int { return s.Slow })})
	}
	if r.Limit != nil {
		lines = append(lines,
			chart.Line{Name: "timed out", Values: pick(func(s Second) int { return s.TimedOut })},
			chart.Line{Name: "limit", Values: pick(func(s Second) int { return s.Limit })},
			chart.Line{Name: "held by the dependency", Values: pick(func(s Second) int { return s.Held })})
	}
	return chart.Chart{Title: title, XLabel: "time (s)", YLabel: "per second", End: r.Duration.Seconds(), Bands: FaultBands(r.Faults), Lines: lines}
}

// overRuns returns c as a chart of the runs of durations with faults: its
// axis ends where the longest run ended, and every run's faults are shaded.
func overRuns(c chart.Chart, durations []time.Duration, faults []Interval) chart.Chart {
	for _, d := range durations {
		c.End = max(c.End, d.Seconds())
	}
	c.Bands = FaultBands(faults)
	return c
}

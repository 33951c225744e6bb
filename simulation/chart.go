package simulation

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"
)

// Chart is a line chart of one or more series over time, rendered to SVG by
// [Chart.WriteSVG] with the standard library only.
type Chart struct {
	// Title is drawn above the plot.
	Title string
	// XLabel and YLabel name the axes.
	XLabel, YLabel string
	// Step is the x distance between consecutive values of a line, in the x
	// axis's unit (1 for a series per second plotted in seconds). Zero means 1.
	Step float64
	// Start is the x of every line's first value, where the x axis starts. The
	// zero value starts it at 0.
	Start float64
	// End is the x at which the run ended, where the x axis ends; its last
	// tick is labelled with it. With End set the chart is one of buckets:
	// value i counts what happened from Start + i x Step for one Step (the
	// calls of one second, say) and is drawn at the middle of that span, and
	// a value whose span the run did not cover whole (it reaches past End)
	// is not drawn, so the second a run ended in, or one after it, does not
	// read as a drop to 0. Zero means the axis ends at the last value's x and
	// every value is a point, drawn where Line says.
	End float64
	// Bands are stretches of the x axis shaded behind the lines and named in
	// the legend, such as a fault's window ([FaultBands]).
	Bands []Band
	// Lines are the series, drawn in order and named in the legend.
	Lines []Line
}

// Line is one named series of a [Chart]; value i is plotted at
// x = Start + i x Step (at the middle of its bucket on a chart with an End).
// A NaN or infinite value is not drawn: it breaks the line, as a gap in the
// data.
type Line struct {
	Name   string
	Values []float64
}

// Band is a stretch of a [Chart]'s x axis, from From to To, shaded and named
// in the legend, once for all the bands of one name. A To of +Inf runs to the
// end of the axis.
type Band struct {
	Name     string
	From, To float64
}

// FaultBands returns a band per fault, on an x axis of seconds, sorted by
// start, each named by the fault and its window: "outage 30-35 s" for
// Interval{From: 30 * time.Second, To: 35 * time.Second, Name: "outage"},
// "fault from 30 s" for a fault without a name that never ends. Faults that
// are the same interval with the same name give one band. When more than
// three faults share a name, their bands share one too, such as
// "outage, 38 times, 120-3451 s", so the legend names them once.
func FaultBands(faults []Interval) []Band {
	var bands []Band
	var names []string // each band's fault's name
	for _, f := range faults {
		name := cmp.Or(f.Name, "fault")
		b := Band{Name: name + " " + label(f.From.Seconds()) + "-" + label(f.To.Seconds()) + " s", From: f.From.Seconds(), To: f.To.Seconds()}
		if f.To == 0 {
			b.Name, b.To = name+" from "+label(f.From.Seconds())+" s", math.Inf(1)
		}
		if !slices.Contains(bands, b) {
			bands, names = append(bands, b), append(names, name)
		}
	}
	nameRepeats(bands, names)
	slices.SortStableFunc(bands, func(a, b Band) int { return cmp.Or(cmp.Compare(a.From, b.From), cmp.Compare(a.To, b.To)) })
	return bands
}

// faultsNamedApart is the most faults of one name that FaultBands names one
// by one.
const faultsNamedApart = 3

// nameRepeats gives the bands of each fault name that more than
// faultsNamedApart of them have (names[i] is band i's) one name for them all:
// the fault's name, how many there are and the stretch they span.
func nameRepeats(bands []Band, names []string) {
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
		group := fmt.Sprintf("%s, %d times, %s-%s s", name, len(same), label(from), label(to))
		if math.IsInf(to, 1) {
			group = fmt.Sprintf("%s, %d times, from %s s", name, len(same), label(from))
		}
		for _, i := range same {
			bands[i].Name = group
		}
	}
}

// Chart returns a chart of r's per-second series: offered, attempts, served,
// refused and failed calls, probes, hedges when the run hedged, and slow
// samples when it had a slow judge, over the run's Duration, with the
// dependency's faults shaded.
func (r *Report) Chart() Chart {
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
	lines := []Line{
		{"offered", pick(func(s Second) int { return s.Offered })},
		{"attempts", pick(func(s Second) int { return s.Attempts })},
		{"served", pick(func(s Second) int { return s.Served })},
		{"refused", pick(Second.Refused)},
		{"failed", pick(func(s Second) int { return s.Failed })},
		{"probes", pick(func(s Second) int { return s.Probes })},
	}
	if r.Hedging {
		lines = append(lines, Line{"hedges", pick(func(s Second) int { return s.Hedges })})
	}
	if r.SlowJudge != nil {
		lines = append(lines, Line{"slow", pick(func(s Second) int { return s.Slow })})
	}
	return Chart{Title: title, XLabel: "time (s)", YLabel: "per second", End: r.Duration.Seconds(), Bands: FaultBands(r.Faults), Lines: lines}
}

// overRuns returns c as a chart of the runs of durations with faults: its
// axis ends where the longest run ended, and every run's faults are shaded.
func overRuns(c Chart, durations []time.Duration, faults []Interval) Chart {
	for _, d := range durations {
		c.End = max(c.End, d.Seconds())
	}
	c.Bands = FaultBands(faults)
	return c
}

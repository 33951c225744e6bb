package simulation

import (
	"fmt"
	"html"
	"io"
	"math"
	"strconv"
	"strings"
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
	// Lines are the series, drawn in order and named in the legend.
	Lines []Line
}

// Line is one named series of a [Chart]; value i is plotted at
// x = Start + i x Step. A NaN or infinite value is not drawn: it breaks the
// line, as a gap in the data.
type Line struct {
	Name   string
	Values []float64
}

// Chart returns a chart of r's per-second series: offered, attempts, served,
// refused and failed calls, probes, hedges when the run hedged, and slow
// samples when it had a slow judge, up to the last second in which anything
// happened.
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
	return trimmed(Chart{Title: title, XLabel: "time (s)", YLabel: "per second", Lines: lines})
}

// trimmed returns c with the values after the last non-zero one of any line
// cut off, such as the empty seconds at the end of a run.
func trimmed(c Chart) Chart {
	n := 0
	for _, l := range c.Lines {
		for i := len(l.Values) - 1; i >= n; i-- {
			if l.Values[i] != 0 {
				n = i + 1
				break
			}
		}
	}
	for i := range c.Lines {
		c.Lines[i].Values = c.Lines[i].Values[:min(n, len(c.Lines[i].Values))]
	}
	return c
}

// Chart geometry, in SVG user units.
const (
	chartWidth   = 1000
	chartHeight  = 420
	plotLeft     = 70
	plotRight    = 700
	plotTop      = 40
	plotBottom   = 360
	legendLeft   = 720
	legendTop    = 50
	legendRowGap = 20
)

// palette colours the lines in order, repeating after the last.
var palette = [...]string{"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"}

// WriteSVG writes the chart as a standalone SVG document: axes with ticks and
// labels, each line as polylines (one per run of drawable values) and a legend. The output depends only on the
// chart, so it is byte-for-byte reproducible.
func (c Chart) WriteSVG(w io.Writer) error {
	step := c.Step
	if step == 0 {
		step = 1
	}
	var xMax, yMax float64
	for _, l := range c.Lines {
		xMax = max(xMax, float64(max(len(l.Values)-1, 0))*step)
		for _, v := range l.Values {
			if finite(v) {
				yMax = max(yMax, v)
			}
		}
	}
	xTick, xTop := ticks(xMax)        // xMax and xTop are measured from Start
	yTick, yTop := ticks(yMax * 1.05) // headroom above the highest value
	x := func(v float64) float64 { return plotLeft + v/xTop*(plotRight-plotLeft) }
	y := func(v float64) float64 { return plotBottom - v/yTop*(plotBottom-plotTop) }

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", chartWidth, chartHeight, chartWidth, chartHeight)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", chartWidth, chartHeight)
	fmt.Fprintf(&b, `<text x="%d" y="24" font-size="16" text-anchor="middle">%s</text>`+"\n", (plotLeft+plotRight)/2, html.EscapeString(c.Title))

	for k := 0.0; k*xTick <= xTop+xTick/2; k++ {
		v := k * xTick
		fmt.Fprintf(&b, `<line x1="%s" y1="%d" x2="%s" y2="%d" stroke="#ddd"/>`, f1(x(v)), plotTop, f1(x(v)), plotBottom)
		fmt.Fprintf(&b, `<text x="%s" y="%d" text-anchor="middle">%s</text>`+"\n", f1(x(v)), plotBottom+16, label(c.Start+v))
	}
	for k := 0.0; k*yTick <= yTop+yTick/2; k++ {
		v := k * yTick
		fmt.Fprintf(&b, `<line x1="%d" y1="%s" x2="%d" y2="%s" stroke="#ddd"/>`, plotLeft, f1(y(v)), plotRight, f1(y(v)))
		fmt.Fprintf(&b, `<text x="%d" y="%s" text-anchor="end">%s</text>`+"\n", plotLeft-6, f1(y(v)+4), label(v))
	}
	fmt.Fprintf(&b, `<polyline points="%d,%d %d,%d %d,%d" fill="none" stroke="black"/>`+"\n", plotLeft, plotTop, plotLeft, plotBottom, plotRight, plotBottom)
	fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle">%s</text>`+"\n", (plotLeft+plotRight)/2, plotBottom+40, html.EscapeString(c.XLabel))
	fmt.Fprintf(&b, `<text x="18" y="%d" text-anchor="middle" transform="rotate(-90 18 %d)">%s</text>`+"\n", (plotTop+plotBottom)/2, (plotTop+plotBottom)/2, html.EscapeString(c.YLabel))

	for i, l := range c.Lines {
		colour := palette[i%len(palette)]
		for j := 0; j < len(l.Values); {
			if !finite(l.Values[j]) {
				j++
				continue
			}
			b.WriteString(`<polyline fill="none" stroke-width="1.5" stroke="` + colour + `" points="`)
			for from := j; j < len(l.Values) && finite(l.Values[j]); j++ {
				if j > from {
					b.WriteByte(' ')
				}
				b.WriteString(f1(x(float64(j)*step)) + "," + f1(y(l.Values[j])))
			}
			b.WriteString(`"/>` + "\n")
		}
		ly := legendTop + i*legendRowGap
		fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="3"/>`, legendLeft, ly, legendLeft+24, ly, colour)
		fmt.Fprintf(&b, `<text x="%d" y="%d">%s</text>`+"\n", legendLeft+30, ly+4, html.EscapeString(l.Name))
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// ticks returns a tick spacing of 1, 2 or 5 times a power of ten giving at
// most about seven ticks from 0 to at least top, and the axis end it gives.
func ticks(top float64) (step, end float64) {
	if !(top > 0) {
		return 1, 1
	}
	raw := top / 6
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	switch m := raw / p; {
	case m <= 1:
		step = p
	case m <= 2:
		step = 2 * p
	case m <= 5:
		step = 5 * p
	default:
		step = 10 * p
	}
	return step, math.Ceil(top/step-1e-9) * step
}

// finite reports whether v can be drawn: neither NaN nor infinite.
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// f1 formats a coordinate with one decimal.
func f1(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

// label formats a tick value in its shortest form, to at most three decimals.
func label(v float64) string {
	return strconv.FormatFloat(math.Round(v*1000)/1000, 'f', -1, 64)
}

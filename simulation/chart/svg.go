package chart

import (
	"fmt"
	"html"
	"io"
	"math"
	"strconv"
	"strings"
)

// Chart geometry, in SVG user units. The zero of the y axis sits zeroLift
// above the x axis, so that a line at 0 is not hidden by the axis.
const (
	chartWidth   = 1000
	chartHeight  = 420
	plotLeft     = 70
	plotRight    = 700
	plotTop      = 40
	plotBottom   = 360
	zeroLift     = 8
	legendLeft   = 720
	legendTop    = 50
	legendRowGap = 20
	// legendChars is about how many characters fit on a legend row.
	legendChars = 40
)

// palette colours the lines in order, repeating after the last.
var palette = [...]string{"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"}

// dashes are the lines' dash patterns, in order, repeating after the last:
// the first line solid, every other one broken in its own rhythm, so that a
// line drawn over another lets the one under it show through its gaps.
var dashes = [...]string{"", "9 4", "2 3", "14 4 2 4", "6 3", "1 3", "18 4 6 4", "4 2 1 2"}

// The fault bands' look: a translucent fill, with dashed edges at the
// band's ends when it is minEdgedBand wide or more; a narrower band, a short
// fault on a long axis, is at least minBandWidth wide and filled deeper so
// that it still shows.
const (
	bandFill     = `fill="#f0a030" fill-opacity="0.2"`
	narrowFill   = `fill="#f0a030" fill-opacity="0.6"`
	bandEdges    = `stroke="#c07010" stroke-dasharray="3 3"`
	minBandWidth = 2.0
	minEdgedBand = 6.0
)

// WriteSVG writes the chart as a standalone SVG document: the bands, axes with
// ticks and labels, each line as polylines (one per run of drawn values; a lone
// value as a dot) and a legend naming the bands and the lines, with a note on a
// line drawn exactly as an earlier one, such as "attempts (= offered)". Line k
// of n is drawn with its own dash pattern, and wider the earlier it comes, so
// that a line lying under another stays in sight. The output depends only on
// the chart, so it is byte-for-byte reproducible.
func (c Chart) WriteSVG(w io.Writer) error {
	drawn := make([][]float64, len(c.Lines))
	var yMax float64
	for i, l := range c.Lines {
		drawn[i] = c.drawn(l)
		for _, v := range drawn[i] {
			if !math.IsNaN(v) {
				yMax = max(yMax, v)
			}
		}
	}
	p := plot{c: c}
	p.from, p.to = c.xRange()
	p.yTick, p.yTop = ticks(yMax * 1.05) // headroom above the highest value

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", chartWidth, chartHeight, chartWidth, chartHeight)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", chartWidth, chartHeight)
	fmt.Fprintf(&b, `<text x="%d" y="24" font-size="16" text-anchor="middle">%s</text>`+"\n", (plotLeft+plotRight)/2, html.EscapeString(c.Title))
	p.writeBands(&b)
	p.writeAxes(&b)
	for i, values := range drawn {
		p.writeLine(&b, c.style(i), values)
	}
	c.writeLegend(&b, drawn)
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// plot is a chart being drawn, with its axes' ranges: x from from to to, y
// from 0 to yTop in ticks of yTick.
type plot struct {
	c           Chart
	from, to    float64
	yTick, yTop float64
}

// x and y map a value on an axis to its SVG coordinate.
func (p plot) x(v float64) float64 { return plotLeft + (v-p.from)/(p.to-p.from)*(plotRight-plotLeft) }
func (p plot) y(v float64) float64 {
	return plotBottom - zeroLift - v/p.yTop*(plotBottom-zeroLift-plotTop)
}

// writeBands shades each band over the part of it on the x axis.
func (p plot) writeBands(b *strings.Builder) {
	for _, band := range p.c.Bands {
		lo, hi := max(band.From, p.from), min(band.To, p.to)
		if !(hi > lo) {
			continue
		}
		width, fill := p.x(hi)-p.x(lo), bandFill
		if width < minEdgedBand {
			width, fill = max(width, minBandWidth), narrowFill
		}
		fmt.Fprintf(b, `<rect class="band" x="%s" y="%d" width="%s" height="%d" %s/>`, f1(p.x(lo)), plotTop, f1(width), plotBottom-plotTop, fill)
		for _, edge := range []float64{band.From, band.To} {
			if edge > p.from && edge < p.to && width >= minEdgedBand {
				fmt.Fprintf(b, `<line x1="%s" y1="%d" x2="%s" y2="%d" %s/>`, f1(p.x(edge)), plotTop, f1(p.x(edge)), plotBottom, bandEdges)
			}
		}
		b.WriteByte('\n')
	}
}

// writeAxes writes the grid, the ticks and their labels, the axes and their
// names.
func (p plot) writeAxes(b *strings.Builder) {
	for _, v := range xTicks(p.to - p.from) {
		x := f1(p.x(p.from + v))
		fmt.Fprintf(b, `<line x1="%s" y1="%d" x2="%s" y2="%d" stroke="#ddd"/>`, x, plotTop, x, plotBottom)
		fmt.Fprintf(b, `<text class="x-tick" x="%s" y="%d" text-anchor="middle">%s</text>`+"\n", x, plotBottom+16, Label(p.from+v))
	}
	for k := 0.0; k*p.yTick <= p.yTop+p.yTick/2; k++ {
		v := k * p.yTick
		fmt.Fprintf(b, `<line x1="%d" y1="%s" x2="%d" y2="%s" stroke="#ddd"/>`, plotLeft, f1(p.y(v)), plotRight, f1(p.y(v)))
		fmt.Fprintf(b, `<text class="y-tick" x="%d" y="%s" text-anchor="end">%s</text>`+"\n", plotLeft-6, f1(p.y(v)+4), Label(v))
	}
	fmt.Fprintf(b, `<polyline points="%d,%d %d,%d %d,%d" fill="none" stroke="black"/>`+"\n", plotLeft, plotTop, plotLeft, plotBottom, plotRight, plotBottom)
	fmt.Fprintf(b, `<text x="%d" y="%d" text-anchor="middle">%s</text>`+"\n", (plotLeft+plotRight)/2, plotBottom+40, html.EscapeString(p.c.XLabel))
	fmt.Fprintf(b, `<text x="18" y="%d" text-anchor="middle" transform="rotate(-90 18 %d)">%s</text>`+"\n", (plotTop+plotBottom)/2, (plotTop+plotBottom)/2, html.EscapeString(p.c.YLabel))
}

// writeLine draws a line's drawn values (NaN where there is none): a
// polyline per run of values, a dot for a run of one.
func (p plot) writeLine(b *strings.Builder, st lineStyle, values []float64) {
	for j := 0; j < len(values); {
		if math.IsNaN(values[j]) {
			j++
			continue
		}
		first := j
		for j < len(values) && !math.IsNaN(values[j]) {
			j++
		}
		if j-first == 1 {
			x, _ := p.c.at(first)
			fmt.Fprintf(b, `<circle class="dot" cx="%s" cy="%s" r="%s" fill="%s"/>`+"\n", f1(p.x(x)), f1(p.y(values[first])), f1(st.width), st.colour)
			continue
		}
		b.WriteString(`<polyline class="series" fill="none"` + st.attrs() + ` points="`)
		for k := first; k < j; k++ {
			if k > first {
				b.WriteByte(' ')
			}
			x, _ := p.c.at(k)
			b.WriteString(f1(p.x(x)) + "," + f1(p.y(values[k])))
		}
		b.WriteString(`"/>` + "\n")
	}
}

// writeLegend writes a row per band name and per line: a swatch and the name,
// with a line's note of identity on the same row when it fits, else on the
// next.
func (c Chart) writeLegend(b *strings.Builder, drawn [][]float64) {
	row := legendTop
	named := map[string]bool{}
	for _, band := range c.Bands {
		if named[band.Name] {
			continue
		}
		named[band.Name] = true
		fmt.Fprintf(b, `<rect class="band-swatch" x="%d" y="%d" width="24" height="12" %s/>`, legendLeft, row-6, bandFill)
		fmt.Fprintf(b, `<text class="legend" x="%d" y="%d">%s</text>`+"\n", legendLeft+30, row+4, html.EscapeString(band.Name))
		row += legendRowGap
	}
	same := sameAs(drawn)
	for i, l := range c.Lines {
		st := c.style(i)
		fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d"%s/>`, legendLeft, row, legendLeft+24, row, st.attrs())
		name, note := l.Name, ""
		if k := same[i]; k >= 0 {
			note = "(= " + c.Lines[k].Name + ")"
		}
		if note != "" && len(name)+1+len(note) <= legendChars {
			name, note = name+" "+note, ""
		}
		fmt.Fprintf(b, `<text class="legend" x="%d" y="%d">%s</text>`+"\n", legendLeft+30, row+4, html.EscapeString(name))
		row += legendRowGap
		if note != "" {
			fmt.Fprintf(b, `<text class="legend" x="%d" y="%d" font-size="11" fill="#555">%s</text>`+"\n", legendLeft+30, row, html.EscapeString(note))
			row += legendRowGap - 4
		}
	}
}

// lineStyle is how one line is stroked.
type lineStyle struct {
	colour, dash string
	width        float64
}

// style returns line i's style: its colour and dash pattern in order, and a
// width from 3.5 for the first line down to 1.5 for the last.
func (c Chart) style(i int) lineStyle {
	st := lineStyle{colour: palette[i%len(palette)], dash: dashes[i%len(dashes)], width: 2}
	if n := len(c.Lines); n > 1 {
		st.width = 1.5 + 2*float64(n-1-i)/float64(n-1)
	}
	return st
}

// attrs renders the style as SVG attributes, each with a leading space.
func (st lineStyle) attrs() string {
	s := ` stroke="` + st.colour + `" stroke-width="` + strconv.FormatFloat(st.width, 'f', 2, 64) + `"`
	if st.dash != "" {
		s += ` stroke-dasharray="` + st.dash + `"`
	}
	return s
}

// f1 formats a coordinate with one decimal.
func f1(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

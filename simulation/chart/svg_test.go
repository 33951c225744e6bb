package chart

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// element is one element of an SVG document: its name, attributes and the
// text directly inside it.
type element struct {
	name  string
	attrs map[string]string
	text  string
}

// parse parses an SVG document, failing the test if it is not well-formed
// XML, and returns its elements in document order.
func parse(t *testing.T, svg []byte) []element {
	t.Helper()
	var out []element
	var open []int // indexes in out of the elements not yet closed
	d := xml.NewDecoder(bytes.NewReader(svg))
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			require.Empty(t, open, "every element closed")
			return out
		}
		require.NoError(t, err)
		switch tok := tok.(type) {
		case xml.StartElement:
			e := element{name: tok.Name.Local, attrs: map[string]string{}}
			for _, a := range tok.Attr {
				e.attrs[a.Name.Local] = a.Value
			}
			out = append(out, e)
			open = append(open, len(out)-1)
		case xml.EndElement:
			open = open[:len(open)-1]
		case xml.CharData:
			if len(open) > 0 {
				out[open[len(open)-1]].text += string(tok)
			}
		}
	}
}

// elements counts an SVG document's elements by name.
func elements(t *testing.T, svg []byte) map[string]int {
	t.Helper()
	counts := map[string]int{}
	for _, e := range parse(t, svg) {
		counts[e.name]++
	}
	return counts
}

// svgOf renders c.
func svgOf(t *testing.T, c Chart) []byte {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, c.WriteSVG(&b))
	return b.Bytes()
}

// withClass returns the elements of class class.
func withClass(es []element, class string) []element {
	var out []element
	for _, e := range es {
		if e.attrs["class"] == class {
			out = append(out, e)
		}
	}
	return out
}

// texts returns the text of each element.
func texts(es []element) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.text)
	}
	return out
}

// points returns the points of a polyline.
func points(t *testing.T, e element) [][2]float64 {
	t.Helper()
	var out [][2]float64
	for _, p := range strings.Fields(e.attrs["points"]) {
		x, y, ok := strings.Cut(p, ",")
		require.True(t, ok, p)
		xf, err := strconv.ParseFloat(x, 64)
		require.NoError(t, err)
		yf, err := strconv.ParseFloat(y, 64)
		require.NoError(t, err)
		out = append(out, [2]float64{xf, yf})
	}
	return out
}

func TestChartWriteSVG(t *testing.T) {
	c := Chart{
		Title:  "a <title> & more",
		XLabel: "time (s)",
		YLabel: "per 100 ms",
		Step:   0.1,
		Lines: []Line{
			{Name: "first", Values: []float64{0, 3, 9, 4}},
			{Name: "second <b>", Values: []float64{1, 1, 2}},
		},
	}
	a, b := svgOf(t, c), svgOf(t, c)
	assert.Equal(t, a, b, "reproducible")

	svg := string(a)
	counts := elements(t, a)
	assert.Equal(t, 1, counts["svg"])
	assert.Equal(t, 3, counts["polyline"], "the axes and one per line")
	assert.Contains(t, svg, "a &lt;title&gt; &amp; more")
	assert.Contains(t, svg, ">second &lt;b&gt;</text>")
	assert.Contains(t, svg, ">per 100 ms</text>")
	// x runs to 0.3 s in ticks of 0.05, y to 10 in ticks of 2.
	for _, tick := range []string{">0.1</text>", ">0.3</text>", ">10</text>", ">8</text>"} {
		assert.Contains(t, svg, tick)
	}
	assert.NotContains(t, svg, ">0.30000000000000004<")
	// The first line's peak (9 of 10) is drawn at 0.2 s: x = 70 + 0.2/0.3 x 630,
	// y = 352 - 9/10 x 312 (0 sits 8 above the x axis, at 352).
	assert.Contains(t, svg, "490.0,71.2")
}

func TestChartStart(t *testing.T) {
	c := Chart{Start: 90, Step: 0.5, Lines: []Line{{Name: "tail", Values: []float64{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1000}}}}
	svg := string(svgOf(t, c))
	// x runs from 90 to 95 in ticks of 1: the first value at the left edge, the
	// last (1000 of 1200) at the right.
	for _, tick := range []string{">90</text>", ">91</text>", ">95</text>"} {
		assert.Contains(t, svg, tick)
	}
	assert.NotContains(t, svg, `text-anchor="middle">0</text>`, "the x axis does not start at 0")
	assert.Contains(t, svg, `points="70.0,`)
	assert.Contains(t, svg, "700.0,92.0")
}

// A band (a fault's window) is shaded from its start to its end, named in
// the legend.
func TestChartShadesItsBands(t *testing.T) {
	c := Chart{End: 10, Bands: []Band{{Name: "outage 3-5 s", From: 3, To: 5}},
		Lines: []Line{{Name: "served", Values: []float64{1, 1, 1, 0, 0, 1, 1, 1, 1, 1}}}}
	es := parse(t, svgOf(t, c))
	bands := withClass(es, "band")
	require.Len(t, bands, 1)
	// The axis runs 0 to 10 over x = 70 to 700: 63 a second.
	assert.Equal(t, "259.0", bands[0].attrs["x"])
	assert.Equal(t, "126.0", bands[0].attrs["width"])
	assert.Contains(t, bands[0].attrs["fill-opacity"], "0.", "translucent")
	assert.Len(t, withClass(es, "band-swatch"), 1)
	assert.Equal(t, []string{"outage 3-5 s", "served"}, texts(withClass(es, "legend")))

	// A band that never ends runs to the end of the axis; one outside it is
	// not drawn, though the legend still names it.
	c.Bands = []Band{{Name: "outage from 8 s", From: 8, To: math.Inf(1)}, {Name: "fault 20-30 s", From: 20, To: 30}}
	es = parse(t, svgOf(t, c))
	bands = withClass(es, "band")
	require.Len(t, bands, 1)
	assert.Equal(t, "574.0", bands[0].attrs["x"])
	assert.Equal(t, "126.0", bands[0].attrs["width"])
	assert.Equal(t, []string{"outage from 8 s", "fault 20-30 s", "served"}, texts(withClass(es, "legend")))
}

// On a chart of buckets, a bucket the run did not cover whole is left out:
// the last second of a run that ended within it, and a second after the run
// (a hedge sent after its end, say), are not plotted as a drop to 0.
func TestChartLeavesPartialBucketsOut(t *testing.T) {
	for _, tc := range []struct {
		name   string
		end    float64
		values []float64
	}{
		{"the run ended half way through its last second", 3.5, []float64{5, 5, 5, 0}},
		{"a second after the run's end", 3, []float64{5, 5, 5, 1}},
	} {
		es := parse(t, svgOf(t, Chart{End: tc.end, Lines: []Line{{Name: "calls", Values: tc.values}}}))
		series := withClass(es, "series")
		require.Len(t, series, 1, tc.name)
		ps := points(t, series[0])
		require.Len(t, ps, 3, "%s: the three whole seconds", tc.name)
		for _, p := range ps {
			assert.Equal(t, ps[0][1], p[1], "%s: every point drawn at 5, none at 0", tc.name)
		}
		// Each value is drawn at the middle of its second.
		assert.InDelta(t, 70+0.5/tc.end*630, ps[0][0], 0.05, tc.name)
		assert.InDelta(t, 70+2.5/tc.end*630, ps[2][0], 0.05, tc.name)
	}

	// A bucket wider than one unit: 10 s buckets over a 25 s run draw two.
	es := parse(t, svgOf(t, Chart{Step: 10, End: 25, Lines: []Line{{Name: "calls", Values: []float64{1, 2, 0}}}}))
	require.Len(t, withClass(es, "series"), 1)
	assert.Len(t, points(t, withClass(es, "series")[0]), 2)
}

// The x axis ends at the run's end, and its last tick says so.
func TestChartAxisEndsAtTheRunsEnd(t *testing.T) {
	for _, end := range []int{90, 180, 3600, 37, 1001, 60, 150, 7} {
		values := make([]float64, end+1) // a second more: the run's last attempts
		for i := range values {
			values[i] = float64(i % 7)
		}
		es := parse(t, svgOf(t, Chart{End: float64(end), Lines: []Line{{Name: "calls", Values: values}}}))
		labels := texts(withClass(es, "x-tick"))
		require.NotEmpty(t, labels, "%d s", end)
		assert.Equal(t, "0", labels[0], "%d s", end)
		assert.Equal(t, strconv.Itoa(end), labels[len(labels)-1], "%d s: the last tick is the run's end", end)
		assert.LessOrEqual(t, len(labels), 11, "%d s: %v", end, labels)
		var xs []float64
		for _, e := range withClass(es, "x-tick") {
			x, err := strconv.ParseFloat(e.attrs["x"], 64)
			require.NoError(t, err)
			xs = append(xs, x)
		}
		assert.Equal(t, float64(plotRight), xs[len(xs)-1], "%d s: the last tick at the axis's right end", end)
		for i := 1; i < len(xs); i++ {
			assert.Greater(t, xs[i]-xs[i-1], 30.0, "%d s: labels %v do not run into each other", end, labels)
		}
	}
}

// Lines that lie on one another stay in sight: each has its own dash pattern
// and width, the earlier ones wider, and a line drawn exactly as an earlier
// one says so in the legend.
func TestChartKeepsIdenticalLinesVisible(t *testing.T) {
	same := []float64{100, 100, 100, 100}
	c := Chart{End: 4, Lines: []Line{
		{Name: "offered", Values: same},
		{Name: "attempts", Values: []float64{100, 100, 100, 100, 7}}, // the same over the run
		{Name: "served", Values: []float64{100, 0, 0, 100}},
		{Name: "a name long enough that its note goes on a row of its own", Values: same},
	}}
	es := parse(t, svgOf(t, c))
	series := withClass(es, "series")
	require.Len(t, series, 4, "every line drawn")
	assert.Equal(t, points(t, series[0]), points(t, series[1]), "the first two drawn at the same points")
	dashes := map[string]bool{}
	widths := map[string]bool{}
	for _, s := range series {
		dashes[s.attrs["stroke-dasharray"]] = true
		widths[s.attrs["stroke-width"]] = true
	}
	assert.Len(t, dashes, 4, "a dash pattern each")
	assert.Len(t, widths, 4, "a width each")
	first, err := strconv.ParseFloat(series[0].attrs["stroke-width"], 64)
	require.NoError(t, err)
	second, err := strconv.ParseFloat(series[1].attrs["stroke-width"], 64)
	require.NoError(t, err)
	assert.Greater(t, first, second, "the line under is wider, so it shows around the one over it")
	assert.Equal(t, []string{
		"offered",
		"attempts (= offered)",
		"served",
		"a name long enough that its note goes on a row of its own",
		"(= offered)",
	}, texts(withClass(es, "legend")))
}

// A lone drawn value, between gaps, is a dot.
func TestChartDrawsALoneValueAsADot(t *testing.T) {
	nan := math.NaN()
	es := parse(t, svgOf(t, Chart{End: 4, Lines: []Line{{Name: "ramp", Values: []float64{nan, 0.5, nan, nan}}}}))
	assert.Empty(t, withClass(es, "series"))
	assert.Len(t, withClass(es, "dot"), 1)
}

// Bands that share a name are each drawn, and named once in the legend.
func TestChartNamesBandsOfOneNameOnce(t *testing.T) {
	bands := []Band{{Name: "brownout", From: 50, To: 60}, {Name: "outage", From: 100, To: 101},
		{Name: "brownout", From: 101, To: 110}, {Name: "outage", From: 200, To: 201}}
	es := parse(t, svgOf(t, Chart{End: 600, Bands: bands, Lines: []Line{{Name: "calls", Values: make([]float64, 600)}}}))
	assert.Len(t, withClass(es, "band"), 4, "every band drawn")
	assert.Equal(t, []string{"brownout", "outage", "calls"}, texts(withClass(es, "legend")), "each name once in the legend")
}

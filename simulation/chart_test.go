package simulation

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTicks(t *testing.T) {
	for _, tc := range []struct{ top, step, end float64 }{
		{0, 1, 1},
		{-3, 1, 1},
		{1, 0.2, 1},
		{7, 2, 8},
		{10, 2, 10},
		{60, 10, 60},
		{100, 20, 100},
		{121, 50, 150},
		{200, 50, 200},
		{0.35, 0.1, 0.4},
		{60000, 10000, 60000},
	} {
		step, end := ticks(tc.top)
		assert.InDelta(t, tc.step, step, 1e-12, "step for %v", tc.top)
		assert.InDelta(t, tc.end, end, 1e-9, "end for %v", tc.top)
	}
}

// elements parses an SVG document and counts its elements by name.
func elements(t *testing.T, svg []byte) map[string]int {
	t.Helper()
	counts := map[string]int{}
	d := xml.NewDecoder(bytes.NewReader(svg))
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			return counts
		}
		require.NoError(t, err)
		if s, ok := tok.(xml.StartElement); ok {
			counts[s.Name.Local]++
		}
	}
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
	var a, b bytes.Buffer
	require.NoError(t, c.WriteSVG(&a))
	require.NoError(t, c.WriteSVG(&b))
	assert.Equal(t, a.Bytes(), b.Bytes(), "reproducible")

	svg := a.String()
	counts := elements(t, a.Bytes())
	assert.Equal(t, 1, counts["svg"])
	assert.Equal(t, 3, counts["polyline"], "the axes and one per line")
	assert.Contains(t, svg, "a &lt;title&gt; &amp; more")
	assert.Contains(t, svg, ">second &lt;b&gt;</text>")
	assert.Contains(t, svg, ">per 100 ms</text>")
	// x runs to 0.3 s in ticks of 0.1, y to 10 in ticks of 2.
	for _, tick := range []string{">0.1</text>", ">0.3</text>", ">10</text>", ">8</text>"} {
		assert.Contains(t, svg, tick)
	}
	assert.NotContains(t, svg, ">0.30000000000000004<")
	// The first line's peak (9 of 10) is drawn at 0.2 s: x = 70 + 0.2/0.3 x 630,
	// y = 360 - 9/10 x 320.
	assert.Contains(t, svg, "490.0,72.0")
}

func TestChartStart(t *testing.T) {
	c := Chart{Start: 90, Step: 0.5, Lines: []Line{{Name: "tail", Values: []float64{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1000}}}}
	var b bytes.Buffer
	require.NoError(t, c.WriteSVG(&b))
	svg := b.String()
	// x runs from 90 to 95 in ticks of 1: the first value at the left edge, the
	// last (1000 of 1200) at the right.
	for _, tick := range []string{">90</text>", ">91</text>", ">95</text>"} {
		assert.Contains(t, svg, tick)
	}
	assert.NotContains(t, svg, `text-anchor="middle">0</text>`, "the x axis does not start at 0")
	assert.Contains(t, svg, `points="70.0,`)
	assert.Contains(t, svg, "700.0,93.3")
}

func TestTrimmed(t *testing.T) {
	c := trimmed(Chart{Lines: []Line{{Values: []float64{1, 0, 2, 0, 0}}, {Values: []float64{0, 0, 0, 3, 0, 0}}, {}}})
	assert.Equal(t, []float64{1, 0, 2, 0}, c.Lines[0].Values)
	assert.Equal(t, []float64{0, 0, 0, 3}, c.Lines[1].Values)
	assert.Empty(t, c.Lines[2].Values)
}

func TestReportChart(t *testing.T) {
	r := &Report{Name: "r", Seconds: []Second{{Offered: 2, Attempts: 3, Served: 1, RefusedByBreaker: 1, RefusedByBudget: 1, Failed: 1, Probes: 1}}}
	c := r.Chart()
	var names []string
	for _, l := range c.Lines {
		names = append(names, l.Name)
	}
	assert.Equal(t, []string{"offered", "attempts", "served", "refused", "failed", "probes"}, names)
	assert.Equal(t, [][]float64{{2}, {3}, {1}, {2}, {1}, {1}}, func() (v [][]float64) {
		for _, l := range c.Lines {
			v = append(v, l.Values)
		}
		return v
	}())
	var b strings.Builder
	require.NoError(t, c.WriteSVG(&b))
	assert.Equal(t, 7, elements(t, []byte(b.String()))["polyline"])
}

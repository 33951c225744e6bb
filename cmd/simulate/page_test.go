package main

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline/simulation"
	"github.com/resilience-go/pipeline/simulation/chart"
)

// node is one element of a parsed page: its name, attributes, the text in
// it and in its children, and the path of element names down to it.
type node struct {
	name  string
	attrs map[string]string
	text  string
	path  []string
}

// parsePage parses a page as XML, which it is written to be, failing the test
// if it is not well-formed, and returns its elements in document order.
func parsePage(t *testing.T, b []byte) []node {
	t.Helper()
	var nodes []node
	var open []int
	d := xml.NewDecoder(bytes.NewReader(b))
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			require.Empty(t, open, "every element closed")
			return nodes
		}
		require.NoError(t, err, "the page is well-formed")
		switch tok := tok.(type) {
		case xml.StartElement:
			n := node{name: tok.Name.Local, attrs: map[string]string{}}
			for _, a := range tok.Attr {
				n.attrs[a.Name.Local] = a.Value
			}
			for _, i := range open {
				n.path = append(n.path, nodes[i].name)
			}
			nodes = append(nodes, n)
			open = append(open, len(nodes)-1)
		case xml.EndElement:
			open = open[:len(open)-1]
		case xml.CharData:
			for _, i := range open {
				nodes[i].text += string(tok)
			}
		}
	}
}

// named returns the nodes named name.
func named(nodes []node, name string) []node {
	var out []node
	for _, n := range nodes {
		if n.name == name {
			out = append(out, n)
		}
	}
	return out
}

// checkPage checks what a page must be whatever it holds: one well-formed
// document with its style inline, no script, nothing to fetch and no link out
// of it, each link to a place on the page; a section per scenario of names
// with its title; and figures SVG documents, each well-formed on its own. It
// returns the page's elements.
func checkPage(t *testing.T, page []byte, names []string, figures int) []node {
	t.Helper()
	s := string(page)
	require.True(t, strings.HasPrefix(s, "<!DOCTYPE html>\n"), "an HTML document")
	nodes := parsePage(t, page)
	require.NotEmpty(t, nodes)
	assert.Equal(t, "html", nodes[0].name)
	assert.Len(t, named(nodes, "title"), 1)
	assert.Len(t, named(nodes, "style"), 1, "the style is inline")
	for _, banned := range []string{"script", "link", "img", "iframe", "object", "embed", "image", "use", "foreignObject"} {
		assert.Empty(t, named(nodes, banned), "no <%s>", banned)
	}
	assert.NotContains(t, s, "<script")
	assert.NotContains(t, s, "url(", "the style fetches nothing")
	assert.NotContains(t, s, "@import")
	ids := map[string]bool{}
	for _, n := range nodes {
		if id, ok := n.attrs["id"]; ok {
			assert.False(t, ids[id], "id %q once", id)
			ids[id] = true
		}
	}
	for _, n := range nodes {
		for _, attr := range []string{"href", "src", "srcset", "action", "data", "poster"} {
			v, ok := n.attrs[attr]
			if !ok {
				continue
			}
			for _, external := range []string{"http:", "https:", "//", "data:", "javascript:"} {
				assert.NotContains(t, v, external, "<%s %s=%q>", n.name, attr, v)
			}
			if assert.True(t, strings.HasPrefix(v, "#"), "<%s %s=%q> points into the page", n.name, attr, v) {
				assert.True(t, ids[v[1:]], "<%s %s=%q> has its target", n.name, attr, v)
			}
		}
		for attr := range n.attrs {
			assert.False(t, strings.HasPrefix(strings.ToLower(attr), "on"), "no event handler: <%s %s>", n.name, attr)
		}
	}

	var titles []string
	for _, h := range named(nodes, "h2") {
		titles = append(titles, h.text)
	}
	assert.Equal(t, names, titles, "a section per scenario, in order")
	var svgs []node
	for _, n := range named(nodes, "svg") {
		assert.NotContains(t, n.path, "svg", "no svg inside another")
		assert.Equal(t, "figure", n.path[len(n.path)-1], "each chart in a figure")
		svgs = append(svgs, n)
	}
	assert.Len(t, svgs, figures, "an <svg> per chart")
	// Each inlined chart is a well-formed SVG document on its own too.
	for rest := s; ; {
		i := strings.Index(rest, "<svg ")
		if i < 0 {
			break
		}
		j := strings.Index(rest[i:], "</svg>")
		require.Positive(t, j)
		var doc struct {
			XMLName xml.Name
		}
		require.NoError(t, xml.Unmarshal([]byte(rest[i:i+j+len("</svg>")]), &doc))
		assert.Equal(t, "svg", doc.XMLName.Local)
		rest = rest[i+j:]
	}
	return nodes
}

// renderPage renders p as writePage writes it.
func renderPage(t *testing.T, p page) []byte {
	t.Helper()
	dir := t.TempDir()
	path, err := writePage(dir, p)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, "index.html"), path)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}

// A page of every scenario, each with a chart, one with a heat map, one
// pending and one whose text is hostile, is one self-contained document that
// shows them all, its text escaped.
func TestThePageIsOneSelfContainedDocument(t *testing.T) {
	dir := t.TempDir()
	fig := func(p picture) figure {
		path, err := p.WriteSVGFile(dir)
		require.NoError(t, err)
		f, err := newFigure(path)
		require.NoError(t, err)
		return f
	}
	c := chart.Chart{Title: "served <per> second", End: 3, Bands: simulation.FaultBands([]simulation.Interval{{From: 1e9, To: 2e9, Name: "outage"}}),
		Lines: []chart.Line{{Name: "a & b", Values: []float64{1, 0, 1}}}}
	heat := chart.HeatMap{Title: "availability", Columns: []string{"30/s"}, Rows: []string{"5s"}, Values: [][]float64{{0.9}}, Low: 0.5, High: 1}
	p := page{Seed: 1, Arrivals: "even"}
	var names []string
	for _, s := range scenarios(simulation.Even) {
		p.Sections = append(p.Sections, section{Name: s.name, Claim: s.claim, Result: "result of " + s.name + "\n", Reports: []string{"report\n"},
			Figures: []figure{fig(c)}})
		names = append(names, s.name)
	}
	p.Sections[0].Figures = append(p.Sections[0].Figures, fig(heat))
	p.Sections = append(p.Sections, section{Name: "waiting", Claim: "a claim", Pending: "a stage the library lacks"},
		section{Name: "hostile", Claim: `<script>alert("x")</script> & <a href="https://example.com">`, Result: "</pre><script src=//x></script>"})
	names = append(names, "waiting", "hostile")

	b := renderPage(t, p)
	nodes := checkPage(t, b, names, len(scenarios(simulation.Even))+1)
	s := string(b)
	assert.Contains(t, s, "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; &amp; &lt;a href=&#34;https://example.com&#34;&gt;", "the text is escaped")
	assert.Contains(t, s, "served &lt;per&gt; second", "the chart's text is escaped in its SVG")
	assert.Contains(t, s, "Pending: a stage the library lacks")
	var claims []string
	for _, n := range nodes {
		if n.name == "p" && n.attrs["class"] == "claim" {
			claims = append(claims, n.text)
		}
	}
	require.Len(t, claims, len(names))
	assert.Equal(t, scenarios(simulation.Even)[0].claim, claims[0])
	assert.Equal(t, `<script>alert("x")</script> & <a href="https://example.com">`, claims[len(claims)-1], "the claim reads as written")
	assert.Contains(t, s, "outage 1-2 s", "the charts keep their fault bands")
	assert.Contains(t, s, "<figcaption>availability.svg</figcaption>")
	assert.Contains(t, s, "<figcaption>served-per-second.svg</figcaption>")
	assert.Equal(t, b, renderPage(t, p), "the same page, byte for byte")
}

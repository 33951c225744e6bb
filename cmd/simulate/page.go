package main

import (
	"bytes"
	_ "embed"
	"html/template"
	"os"
	"path/filepath"
)

// The report page: one self-contained HTML document, index.html beside the
// SVG files, holding every scenario that ran with its claim, its result, each
// variant's figures and every chart, inlined. It has no script, no style
// sheet or image of its own to fetch, and no link out of the page, so it reads
// the same opened from disk, offline, with JavaScript off.

// pageFile is the report page's file name in the output directory.
const pageFile = "index.html"

//go:embed page.html
var pageHTML string

// pageTemplate renders a page. It is written as well-formed XML (void
// elements closed, no named entities beyond XML's), so that a test can parse
// it with encoding/xml.
var pageTemplate = template.Must(template.New(pageFile).Parse(pageHTML))

// page is what the report page shows: how the scenarios ran, and each of
// them in the order it ran.
type page struct {
	Seed     uint64
	Arrivals string
	Sections []section
}

// section is one scenario on the page.
type section struct {
	// Name and Claim are the scenario's; Pending, when not empty, says why it
	// could not run, and the fields below are empty.
	Name, Claim, Pending string
	// Result is the scenario's summary, the figures its claim compares; Reports
	// are each variant's report, in the command's text.
	Result  string
	Reports []string
	// Figures are its charts and heat maps.
	Figures []figure
}

// figure is one chart or heat map on the page: the SVG document, inlined,
// and the name of its file beside the page.
type figure struct {
	File string
	SVG  template.HTML
}

// newFigure makes a figure of the SVG file at path, as a chart's or a heat
// map's WriteSVGFile wrote it. Their SVG escapes every text it holds, so it
// is trusted as HTML as it is.
func newFigure(path string) (figure, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return figure{}, err
	}
	return figure{File: filepath.Base(path), SVG: template.HTML(b)}, nil
}

// writePage writes p to index.html in dir and returns the file's path.
func writePage(dir string, p page) (string, error) {
	var b bytes.Buffer
	if err := pageTemplate.Execute(&b, p); err != nil {
		return "", err
	}
	path := filepath.Join(dir, pageFile)
	return path, os.WriteFile(path, b.Bytes(), 0o644)
}

package chart

import (
	"fmt"
	"html"
	"io"
	"math"
	"strings"
)

// HeatMap is a grid of values drawn as coloured cells, each with its value
// written in it, rendered to SVG by [HeatMap.WriteSVG] with the standard
// library only. Colour runs from red at Low to green at High, through yellow;
// a NaN value is drawn grey.
type HeatMap struct {
	// Title is drawn above the grid.
	Title string
	// XLabel and YLabel name the axes; Columns and Rows label each column and
	// row, left to right and top to bottom.
	XLabel, YLabel string
	Columns, Rows  []string
	// Values are the cells, Values[row][column].
	Values [][]float64
	// Text is written in each cell, Text[row][column]; a missing entry writes
	// the value to three decimals.
	Text [][]string
	// Marked outlines a cell in black, Marked[row][column]: a cell that fails
	// a rule, say. A missing entry is not marked.
	Marked [][]bool
	// Low and High are the values the colour scale runs between; values
	// beyond them take the end colours.
	Low, High float64
	// Note is written under the grid, a line per line of it: what a cell's
	// text says, a verdict.
	Note string
}

// The heat map's layout, in pixels.
const (
	heatLeft, heatTop = 110, 56
	heatCellW         = 150
	heatCellH         = 44
)

// WriteSVG writes the heat map as a standalone SVG document. The output
// depends only on the map, so it is byte-for-byte reproducible.
func (h HeatMap) WriteSVG(w io.Writer) error {
	width := heatLeft + heatCellW*len(h.Columns) + 30
	for _, line := range strings.Split(h.Note, "\n") {
		width = max(width, heatLeft+7*len(line)) // about 7 pixels a character at 12 px
	}
	height := heatTop + heatCellH*len(h.Rows) + 70 + 22*(strings.Count(h.Note, "\n")+1)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", width, height)
	fmt.Fprintf(&b, `<text x="%d" y="24" font-size="16" text-anchor="middle">%s</text>`+"\n", width/2, html.EscapeString(h.Title))
	for j, c := range h.Columns {
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle">%s</text>`+"\n", heatLeft+j*heatCellW+heatCellW/2, heatTop-8, html.EscapeString(c))
	}
	for i, r := range h.Rows {
		y := heatTop + i*heatCellH
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end">%s</text>`+"\n", heatLeft-8, y+heatCellH/2+4, html.EscapeString(r))
		for j := range h.Columns {
			v := math.NaN()
			if i < len(h.Values) && j < len(h.Values[i]) {
				v = h.Values[i][j]
			}
			x := heatLeft + j*heatCellW
			stroke := `stroke="white"`
			if i < len(h.Marked) && j < len(h.Marked[i]) && h.Marked[i][j] {
				stroke = `stroke="black" stroke-width="3"`
			}
			fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" fill="%s" %s/>`+"\n", x, y, heatCellW, heatCellH, h.colour(v), stroke)
			text := fmt.Sprintf("%.3f", v)
			if i < len(h.Text) && j < len(h.Text[i]) {
				text = h.Text[i][j]
			}
			fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle">%s</text>`+"\n", x+heatCellW/2, y+heatCellH/2+4, html.EscapeString(text))
		}
	}
	bottom := heatTop + heatCellH*len(h.Rows)
	fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle">%s</text>`+"\n", heatLeft+heatCellW*len(h.Columns)/2, bottom+22, html.EscapeString(h.XLabel))
	fmt.Fprintf(&b, `<text x="18" y="%d" text-anchor="middle" transform="rotate(-90 18 %d)">%s</text>`+"\n", heatTop+heatCellH*len(h.Rows)/2, heatTop+heatCellH*len(h.Rows)/2, html.EscapeString(h.YLabel))
	fmt.Fprintf(&b, `<text x="%d" y="%d">colour: %s (red) to %s (green)</text>`+"\n", heatLeft, bottom+46, Label(h.Low), Label(h.High))
	for i, line := range strings.Split(h.Note, "\n") {
		fmt.Fprintf(&b, `<text x="%d" y="%d">%s</text>`+"\n", heatLeft, bottom+68+22*i, html.EscapeString(line))
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// colour returns v's fill: red at Low, yellow half way, green at High.
func (h HeatMap) colour(v float64) string {
	if math.IsNaN(v) || !(h.High > h.Low) {
		return "#cccccc"
	}
	t := min(max((v-h.Low)/(h.High-h.Low), 0), 1)
	red, green := 230.0, 230*2*t
	if t > 0.5 {
		red, green = 230*2*(1-t), 200
	}
	return fmt.Sprintf("#%02x%02x%02x", int(red), int(green), 80)
}

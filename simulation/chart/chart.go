// Package chart draws the simulations' charts, line charts and heat maps,
// as SVG with the standard library only.
package chart

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
	// the legend, such as a fault's window (simulation.FaultBands).
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

package chart

import "math"

// step returns the chart's Step, 1 for the zero value.
func (c Chart) step() float64 {
	if c.Step == 0 {
		return 1
	}
	return c.Step
}

// xRange returns where the x axis starts and ends: from Start to End, or,
// without an End, to the x of the last value of the longest line (to one past
// Start when that leaves nothing to span).
func (c Chart) xRange() (from, to float64) {
	from, to = c.Start, c.End
	if c.End == 0 {
		n := 0
		for _, l := range c.Lines {
			n = max(n, len(l.Values))
		}
		to = c.Start + float64(max(n-1, 0))*c.step()
	}
	if !(to > from) {
		to = from + 1
	}
	return from, to
}

// at returns the x at which value i of a line is drawn, and whether it is
// drawn at all. Without an End it is Start + i x Step, always drawn. With
// one, value i stands for the bucket from Start + i x Step for one Step: it
// is drawn at the bucket's middle, and only when the run covered the whole
// bucket, that is when the share of it inside [Start, End] is 1. (The
// buckets start at Start, so in practice only those at the end are partial,
// but the share is taken at both ends.)
func (c Chart) at(i int) (x float64, ok bool) {
	step := c.step()
	lo := c.Start + float64(i)*step
	if c.End == 0 {
		return lo, true
	}
	covered := (min(lo+step, c.End) - max(lo, c.Start)) / step
	return lo + step/2, covered >= 1-1e-9
}

// drawn returns l's values as they are drawn: NaN where a value is not (it
// is NaN or infinite, or its bucket is partial), and nothing past the x axis.
func (c Chart) drawn(l Line) []float64 {
	_, to := c.xRange()
	v := make([]float64, 0, len(l.Values))
	for i, value := range l.Values {
		x, ok := c.at(i)
		if x > to+1e-9*c.step() {
			break
		}
		if !ok || !finite(value) {
			value = math.NaN()
		}
		v = append(v, value)
	}
	return v
}

// sameAs returns, for each line as drawn, the index of the first line before
// it drawn exactly the same (a value at each x where it has one, the same
// value, and none elsewhere), or -1 when there is none or the line draws
// nothing.
func sameAs(drawn [][]float64) []int {
	same := make([]int, len(drawn))
	for i, a := range drawn {
		same[i] = -1
		if !drawsSomething(a) {
			continue
		}
		for k := range i {
			if equalDrawn(a, drawn[k]) {
				same[i] = k
				break
			}
		}
	}
	return same
}

// drawsSomething reports whether v has a drawn value.
func drawsSomething(v []float64) bool {
	for _, x := range v {
		if !math.IsNaN(x) {
			return true
		}
	}
	return false
}

// equalDrawn reports whether a and b are drawn the same: NaN (not drawn)
// matches NaN and a missing value, a value only the same value.
func equalDrawn(a, b []float64) bool {
	for i := range max(len(a), len(b)) {
		x, y := math.NaN(), math.NaN()
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if x != y && !(math.IsNaN(x) && math.IsNaN(y)) {
			return false
		}
	}
	return true
}

// finite reports whether v can be drawn: neither NaN nor infinite.
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

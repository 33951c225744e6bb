package chart

import (
	"math"
	"strconv"
)

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

// roundSteps are the leading digits of the tick steps xTicks tries, each with
// how much less round it is than 1, 2 and 5: 30 s and 15 s steps suit
// seconds; 2.5 and 4 suit little else.
var roundSteps = []struct{ digits, cost float64 }{
	{1, 0}, {2, 0}, {5, 0}, {3, 0.5}, {6, 0.5}, {1.5, 1}, {2.5, 1}, {4, 1},
}

// xTicks returns the ticks of an x axis that runs from 0 to end, as offsets
// from its start, the last of them end itself, so that the axis is labelled
// to its end exactly. When a step of roundSteps times a power of ten divides
// end into 4 to 10 parts, the ticks are its multiples: of the steps that do,
// the one whose parts are nearest 6, a less round step counting as farther
// by its cost, the smaller on a tie (10 s for 60 s, 30 s for 180 s, 15 s for
// 90 s, 600 s for 3600 s). Otherwise they are the multiples of the step
// [ticks] gives below end, then end, leaving out a multiple closer to end than
// 0.4 of a step, whose label would run into end's: 0, 10, 20, 30, 37 for 37 s.
func xTicks(end float64) []float64 {
	if !(end > 0) || math.IsInf(end, 0) {
		return []float64{0}
	}
	best, bestCost := 0.0, math.Inf(1)
	for p := math.Pow(10, math.Floor(math.Log10(end/10))-1); p <= end; p *= 10 {
		for _, r := range roundSteps {
			step := r.digits * p
			parts := end / step
			if math.Abs(parts-math.Round(parts)) > 1e-9*parts || parts < 4-1e-9 || parts > 10+1e-9 {
				continue
			}
			if cost := math.Abs(math.Round(parts)-6) + r.cost; cost < bestCost {
				best, bestCost = step, cost
			}
		}
	}
	var out []float64
	if best > 0 {
		n := int(math.Round(end / best))
		for k := range n {
			out = append(out, float64(k)*best)
		}
		return append(out, end)
	}
	step, _ := ticks(end)
	for k := 0.0; k*step < end-0.4*step; k++ {
		out = append(out, k*step)
	}
	return append(out, end)
}

// Label formats a value as the charts write it on an axis or in a legend:
// in its shortest form, to at most three decimals.
func Label(v float64) string {
	return strconv.FormatFloat(math.Round(v*1000)/1000, 'f', -1, 64)
}

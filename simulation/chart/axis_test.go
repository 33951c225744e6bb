package chart

import (
	"testing"

	"github.com/stretchr/testify/assert"
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

// The x axis is labelled to its end: in round steps when one divides it,
// else in the y axis's steps and then the end itself, a step too close to it
// left out.
func TestXTicks(t *testing.T) {
	for _, tc := range []struct {
		end  float64
		want []float64
	}{
		{60, []float64{0, 10, 20, 30, 40, 50, 60}},
		{90, []float64{0, 15, 30, 45, 60, 75, 90}},
		{180, []float64{0, 30, 60, 90, 120, 150, 180}},
		{3600, []float64{0, 600, 1200, 1800, 2400, 3000, 3600}},
		{80, []float64{0, 10, 20, 30, 40, 50, 60, 70, 80}},
		{37, []float64{0, 10, 20, 30, 37}},
		{1001, []float64{0, 200, 400, 600, 800, 1001}},
		{9.9, []float64{0, 2, 4, 6, 8, 9.9}},
		{0, []float64{0}},
	} {
		got := xTicks(tc.end)
		if assert.Len(t, got, len(tc.want), "ticks for %v: %v", tc.end, got) {
			for i := range got {
				assert.InDelta(t, tc.want[i], got[i], 1e-9, "tick %d for %v", i, tc.end)
			}
		}
	}
}

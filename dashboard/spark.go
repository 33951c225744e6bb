package dashboard

import (
	"math"
	"strconv"
	"strings"

	"github.com/resilience-go/pipeline/health"
)

// The size of a sparkline, in the SVG's user units (pixels).
const (
	sparkWidth  = 120
	sparkHeight = 20
)

// sparks are the sparklines of one dependency's history: each drawn over
// the last History samples, the latest at the right edge.
type sparks struct {
	States                                    []stateRun
	Pressure, Tokens, Attempts, Refusals, P99 spark
}

// stateRun is a run of samples in one state, drawn as one coloured band.
type stateRun struct {
	X, Width string
	State    string
}

// spark is one sparkline: its polylines (a value not read breaks the line)
// and the largest value it is scaled to.
type spark struct {
	Lines []string
	Max   float64
}

// sparksOf draws the sparklines of h. Call it with mu held.
func (d *Dashboard) sparksOf(h *series, dep health.Dependency) *sparks {
	size := d.cfg.History
	n := len(h.ring)
	step := float64(sparkWidth) / float64(max(size-1, 1))
	x := func(i int) float64 { return float64(sparkWidth) - float64(n-1-i)*step }
	s := &sparks{}
	// The state bands: each sample covers a step, the latest ending at the edge.
	start, current := 0, none
	flush := func(end int) {
		if end > start {
			x0 := max(x(start)-step, 0)
			s.States = append(s.States, stateRun{X: num(x0), Width: num(x(end-1) - x0), State: current.String()})
		}
	}
	h.samples(func(i int, v sample) {
		if i == 0 || v.state != current {
			flush(i)
			start, current = i, v.state
		}
	})
	flush(n)
	values := func(f func(sample) float32) []float64 {
		out := make([]float64, 0, n)
		h.samples(func(_ int, v sample) { out = append(out, float64(f(v))) })
		return out
	}
	capacity := 0.0
	if dep.Budget != nil {
		capacity = dep.Budget.Capacity
	}
	s.Pressure = line(values(func(v sample) float32 { return v.pressure }), x, 1)
	s.Tokens = line(values(func(v sample) float32 { return v.tokens }), x, capacity)
	s.Attempts = line(values(func(v sample) float32 { return v.attempts }), x, 0)
	s.Refusals = line(values(func(v sample) float32 { return v.refusals }), x, 0)
	s.P99 = line(values(func(v sample) float32 { return v.p99 }), x, 0)
	return s
}

// line draws vs at x(i), scaled so that top (or the largest value, if
// larger) is at the top; a NaN breaks the line, and a value alone between
// two breaks is drawn as a short dash.
func line(vs []float64, x func(int) float64, top float64) spark {
	sp := spark{Max: top}
	for _, v := range vs {
		if !math.IsNaN(v) && v > sp.Max {
			sp.Max = v
		}
	}
	scale := 0.0
	if sp.Max > 0 {
		scale = float64(sparkHeight-2) / sp.Max
	}
	y := func(v float64) string { return num(float64(sparkHeight-1) - v*scale) }
	var b strings.Builder
	points, lastX, lastY := 0, 0.0, ""
	end := func() {
		if points == 1 {
			b.WriteString(" " + num(lastX-2) + "," + lastY)
		}
		if points > 0 {
			sp.Lines = append(sp.Lines, b.String())
		}
		b.Reset()
		points = 0
	}
	for i, v := range vs {
		if math.IsNaN(v) {
			end()
			continue
		}
		if points > 0 {
			b.WriteByte(' ')
		}
		lastX, lastY = x(i), y(v)
		b.WriteString(num(lastX) + "," + lastY)
		points++
	}
	end()
	return sp
}

// num formats a coordinate with one decimal.
func num(f float64) string { return strconv.FormatFloat(f, 'f', 1, 64) }

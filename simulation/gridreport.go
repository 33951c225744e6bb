package simulation

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/resilience-go/pipeline/simulation/chart"

	"github.com/resilience-go/pipeline/policy/throttle"
	"github.com/resilience-go/pipeline/standard"
)

// MetastabilityGrid returns the built-in metastability grid with arrivals a:
// the grid of issue #26 (loads 30, 50, 70, 90 calls a second against a
// Capacity of 100, outages none, 2, 5 and 10 s from 20 s, seeds 1 to 3, 120 s
// runs) and three clients, each built from the preset so that the grid
// judges what users get: "retries" (the preset's retry and budget and
// timeouts, no breaker, no hedge: the baseline), "card" (the preset exactly
// as standard.Config{} builds it, see [Preset]), and "throttle" (the
// baseline with the client-side adaptive throttle at its defaults in the
// breaker's place).
func MetastabilityGrid(a Arrivals) Grid {
	card, err := Preset(standard.Config{})
	if err != nil {
		panic(err) // the zero Config is valid
	}
	retries := card.WithoutBreaker()
	gate := retries
	gate.Throttle = &throttle.Config{}
	return Grid{Arrivals: a, Clients: []GridClient{{"retries", retries}, {"card", card}, {"throttle", gate}}}
}

// String renders r as a table, a row per cell and a column per client, each
// "availability, share served at the end, and when it ended stable", with
// the verdict on each client after the first.
func (r *GridReport) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d cells x %d seeds x %d clients of %s runs; per client: availability, share served in the last %s, stable after (from the outage's end)\n",
		r.Name, len(r.Cells), len(r.Seeds), len(r.Clients), seconds(r.Duration), seconds(gridTail))
	row := func(first, second string, cols []string) {
		line := fmt.Sprintf("  %-7s %5s", first, second)
		for _, c := range cols {
			line += fmt.Sprintf("  %-24s", c)
		}
		b.WriteString(strings.TrimRight(line, " ") + "\n")
	}
	row("outage", "load", r.Clients)
	for _, cell := range r.Cells {
		var cols []string
		for _, res := range cell.Results {
			cols = append(cols, fmt.Sprintf("%.3f %.3f %s", res.Availability, res.LastShare, res.stability(len(r.Seeds))))
		}
		row(seconds(cell.Outage), number(cell.Load), cols)
	}
	for k := 1; k < len(r.Clients); k++ {
		v := r.Judge(k)
		fmt.Fprintf(&b, "verdict %s\n", v)
		for _, f := range v.Failing {
			fmt.Fprintf(&b, "  fails at %s\n", f)
		}
	}
	return b.String()
}

// stability says how the runs of a result ended: "+Ns" when every seed ended
// stable, the longest after N s; "stuck" when none did; "k/n +Ns" between.
func (res GridResult) stability(seeds int) string {
	stable := 0
	for _, run := range res.Runs {
		if run.Stable {
			stable++
		}
	}
	_, longest := res.Stable()
	switch stable {
	case 0:
		return "stuck"
	case seeds:
		return "+" + seconds(longest)
	}
	return strconv.Itoa(stable) + "/" + strconv.Itoa(seeds) + " +" + seconds(longest)
}

// HeatMaps draws each client's availability over the grid, a row per outage
// and a column per load, each cell with its availability and stability; a
// judged client's cells that fail the rule are outlined, and its verdict is
// written under its map.
func (r *GridReport) HeatMaps() []chart.HeatMap {
	var maps []chart.HeatMap
	for k, name := range r.Clients {
		h := chart.HeatMap{
			Title:  r.Name + ": availability, " + name,
			XLabel: "load (calls a second, against a capacity of 100)", YLabel: "outage",
			Low: 0.5, High: 1,
		}
		for _, l := range r.Loads {
			h.Columns = append(h.Columns, number(l)+"/s")
		}
		for _, o := range r.Outages {
			h.Rows = append(h.Rows, seconds(o))
		}
		h.Values = make([][]float64, len(r.Outages))
		h.Text = make([][]string, len(r.Outages))
		h.Marked = make([][]bool, len(r.Outages))
		h.Note = fmt.Sprintf("each cell: the availability over %d seeds, and when every seed was stable after the outage's end (k/n: k of them), or stuck", len(r.Seeds))
		type at struct {
			load   float64
			outage time.Duration
		}
		failing := map[at]bool{}
		if k > 0 {
			v := r.Judge(k)
			h.Note += "\nverdict against " + r.Clients[0] + ", " + v.String() + "; failing cells outlined"
			for _, f := range v.Failing {
				failing[at{f.Load, f.Outage}] = true
			}
		}
		for i, cell := range r.Cells {
			row := i / len(r.Loads)
			res := cell.Results[k]
			h.Values[row] = append(h.Values[row], res.Availability)
			h.Text[row] = append(h.Text[row], fmt.Sprintf("%.3f %s", res.Availability, res.stability(len(r.Seeds))))
			h.Marked[row] = append(h.Marked[row], failing[at{cell.Load, cell.Outage}])
		}
		maps = append(maps, h)
	}
	return maps
}

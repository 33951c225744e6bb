package simulation

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/resilience-go/pipeline/simulation/chart"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReportChart(t *testing.T) {
	r := &Report{Name: "r", Duration: 2 * time.Second, Faults: []Interval{{From: time.Second, Name: "outage"}}, Seconds: []Second{
		{Offered: 2, Attempts: 3, Served: 1, RefusedByBreaker: 1, RefusedByBudget: 1, Failed: 1, Probes: 1},
		{Offered: 1, Attempts: 1, Served: 1},
		{Attempts: 1}, // a retry after the run's end
	}}
	c := r.Chart()
	var names []string
	for _, l := range c.Lines {
		names = append(names, l.Name)
	}
	assert.Equal(t, []string{"offered", "attempts", "served", "refused", "failed", "probes"}, names)
	assert.Equal(t, [][]float64{{2, 1, 0}, {3, 1, 1}, {1, 1, 0}, {2, 0, 0}, {1, 0, 0}, {1, 0, 0}}, func() (v [][]float64) {
		for _, l := range c.Lines {
			v = append(v, l.Values)
		}
		return v
	}())
	assert.Equal(t, 2.0, c.End, "the axis ends at the run's end")
	assert.Equal(t, []chart.Band{{Name: "outage from 1 s", From: 1, To: math.Inf(1)}}, c.Bands)
	var b strings.Builder
	require.NoError(t, c.WriteSVG(&b))
	assert.Equal(t, 7, strings.Count(b.String(), "<polyline"), "the axes and one per line")
}

func TestFaultBands(t *testing.T) {
	s := time.Second
	bands := FaultBands([]Interval{
		{From: 30 * s, To: 35 * s, Name: "outage"},
		{From: 10 * s, To: 40 * s},
		{From: 30 * s, To: 35 * s, Name: "outage"}, // the same fault of another run
		{From: 1500 * time.Millisecond, To: 2250 * time.Millisecond, Name: "brownout (10x)"},
	})
	assert.Equal(t, []chart.Band{
		{Name: "brownout (10x) 1.5-2.25 s", From: 1.5, To: 2.25},
		{Name: "fault 10-40 s", From: 10, To: 40},
		{Name: "outage 30-35 s", From: 30, To: 35},
	}, bands, "sorted by start, each fault once, named with its window")
	assert.Nil(t, FaultBands(nil))
}

// Every scenario whose dependency has a fault shades it on its charts over
// time, and no chart over time runs past the end of its runs.
func TestScenarioChartsShadeTheirFaults(t *testing.T) {
	s, ok := lookup("ramp-vs-cliff")
	require.True(t, ok)
	rs, err := s.Run(DefaultSeed)
	require.NoError(t, err)
	charts := []chart.Chart{rs[0].Chart()}
	charts = append(charts, s.Compare(rs)...)
	for _, c := range charts {
		assert.Equal(t, []chart.Band{{Name: "outage 30-35 s", From: 30, To: 35}}, c.Bands, c.Title)
		assert.Equal(t, 80.0, c.End, c.Title)
	}
}

// Many faults of one name are named once, with how many there are and the
// stretch they span; fewer are named one by one.
func TestFaultBandsNameRepeatedFaultsOnce(t *testing.T) {
	s := time.Second
	var faults []Interval
	for at := 100 * s; at < 500*s; at += 100 * s {
		faults = append(faults, Interval{From: at, To: at + s, Name: "outage"}, Interval{From: at + s, To: at + 10*s, Name: "brownout (3x)"})
	}
	faults = append(faults, Interval{From: 50 * s, To: 60 * s, Name: "brownout (3x)"})
	bands := FaultBands(faults)
	require.Len(t, bands, 9)
	names := map[string]int{}
	for _, b := range bands {
		names[b.Name]++
	}
	assert.Equal(t, map[string]int{"outage, 4 times, 100-401 s": 4, "brownout (3x), 5 times, 50-410 s": 5}, names)
	assert.Equal(t, 50.0, bands[0].From, "still sorted by start")

	assert.Len(t, FaultBands(faults[:6]), 6)
	assert.Equal(t, "outage 100-101 s", FaultBands(faults[:6])[0].Name, "three of a name, each named")
}

package simulate

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline/simulation"
	"github.com/resilience-go/pipeline/simulation/chart"
)

// scenario is Scenario(1, 0), run once for every test of this file.
var scenario = sync.OnceValues(func() ([]*Report, error) { return Scenario(1, 0) })

func reports(t *testing.T) []*Report {
	t.Helper()
	rs, err := scenario()
	require.NoError(t, err)
	require.Len(t, rs, len(Cases)*len(Strategies))
	return rs
}

// ratio is the doomed calls of the independent breakers over those of st.
func ratio(t *testing.T, rs []*Report, name string, st Strategy) float64 {
	t.Helper()
	ind, r := Find(rs, name, Independent), Find(rs, name, st)
	require.Positive(t, r.Totals().Doomed)
	return float64(ind.Totals().Doomed) / float64(r.Totals().Doomed)
}

// Under an even load a fleet-wide outage trips every process on its own
// evidence (5 failures, by 2.5 s at 2 calls a second) at about the moment
// the others trip on theirs: sharing saves next to nothing. What it costs is
// recovery: a shared break holds the processes that recovered first open
// while others are still in theirs.
func TestOutageEvenLoad(t *testing.T) {
	rs := reports(t)
	for _, st := range Strategies {
		r := Find(rs, "outage", st)
		d, ok := r.TimeToStop(1, true)
		require.True(t, ok, "%s: every process stopped", st)
		assert.Less(t, d, 3500*time.Millisecond, "%s: every process stopped within 3.5 s", st)
	}
	assert.InDelta(t, 1.0, ratio(t, rs, "outage", Quorum), 0.05, "quorum")
	assert.InDelta(t, 1.0, ratio(t, rs, "outage", Naive), 0.1, "naive")

	ind := Find(rs, "outage", Independent).Totals().WronglyRefused
	assert.Greater(t, Find(rs, "outage", Naive).Totals().WronglyRefused, 3*ind/2, "naive recovers with the last process")
	q := Find(rs, "outage", Quorum).Totals().WronglyRefused
	assert.GreaterOrEqual(t, q, ind, "quorum")
	assert.Less(t, q, 13*ind/10, "quorum recovers once fewer than half are open")
}

// Under an uneven load, the quiet processes' own evidence is slow, and
// sharing spares them most of it: naive sharing follows the first busy
// process, the quorum the busy half.
func TestOutageUnevenLoad(t *testing.T) {
	rs := reports(t)
	assert.Greater(t, ratio(t, rs, "outage-uneven", Naive), 2.0, "naive")
	assert.Greater(t, ratio(t, rs, "outage-uneven", Quorum), 1.15, "quorum")
	ind, ok := Find(rs, "outage-uneven", Independent).TimeToStop(0.9, true)
	require.True(t, ok)
	q, ok := Find(rs, "outage-uneven", Quorum).TimeToStop(0.9, true)
	require.True(t, ok)
	assert.Less(t, q, ind/2, "nine tenths stopped in under half the time")
}

// One sick process opens every breaker under naive sharing, and none but
// its own under the quorum, as without sharing.
func TestSickProcess(t *testing.T) {
	rs := reports(t)
	naive := Find(rs, "sick-process", Naive)
	spared, stopped := naive.spared()
	assert.Equal(t, 199, spared)
	assert.Equal(t, spared, stopped, "naive: every healthy process stopped")
	d, ok := naive.TimeToStop(1, false)
	require.True(t, ok)
	assert.Less(t, d, 5*time.Second, "naive: within two refreshes of the sick process's trip")
	offered := naive.Totals().Offered
	assert.Greater(t, naive.SparedRefused, offered/4, "naive refuses healthy processes massively")

	for _, st := range []Strategy{Independent, Quorum} {
		r := Find(rs, "sick-process", st)
		_, stopped := r.spared()
		assert.Zero(t, stopped, "%s: no healthy process stopped", st)
		assert.Zero(t, r.SparedRefused, "%s: no healthy process refused anything", st)
		assert.Zero(t, r.Follows, "%s", st)
		d, ok := r.TimeToStop(1, true)
		require.True(t, ok, "%s: the sick process stopped", st)
		assert.Less(t, d, 3500*time.Millisecond, "%s", st)
	}
}

// The same seed gives the same bytes: the reports, summary and charts of
// the two sharing strategies with the sick process (the case where they
// differ most) are those of Scenario(1, 0), and another seed gives other
// figures. (Running the whole scenario again would double the test's time
// under the race detector; cmd/simulate's test compares two whole runs of a
// smaller fleet.)
func TestScenarioIsDeterministic(t *testing.T) {
	render := func(rs ...*Report) []byte {
		var b bytes.Buffer
		for _, r := range rs {
			b.WriteString(r.String())
		}
		b.WriteString(Summary(rs))
		for _, c := range Charts(rs) {
			require.NoError(t, c.WriteSVG(&b))
		}
		return b.Bytes()
	}
	run := func(seed uint64, st Strategy) *Report {
		r, err := Run(Config{Name: "sick-process", Seed: seed, Strategy: st, Situation: SickProcess})
		require.NoError(t, err)
		return r
	}
	rs := reports(t)
	naive, quorum := run(1, Naive), run(1, Quorum)
	assert.Equal(t, render(Find(rs, "sick-process", Naive), Find(rs, "sick-process", Quorum)), render(naive, quorum))
	assert.NotEqual(t, render(naive), render(run(2, Naive)))
}

func TestConfigRefusesImpossibleValues(t *testing.T) {
	err := Config{Strategy: 9, Situation: 9, Processes: 1, Rate: -1, Rates: []float64{0}, Duration: -1,
		Refresh: -1, Fraction: 1}.Validate()
	require.Error(t, err)
	for _, want := range []string{"Config.Strategy", "Config.Situation", "Config.Processes", "Config.Rate ",
		"Config.Rates[0]", "Config.Duration", "Config.Refresh", "Config.Fraction"} {
		assert.ErrorContains(t, err, want)
	}
	_, err = Run(Config{Fault: simulation.Interval{From: 5 * time.Second, To: 5 * time.Second}})
	assert.ErrorContains(t, err, "Config.Fault")
	assert.NoError(t, Config{}.Validate())
}

// Each chart runs over the 90 s of the run, its last tick the run's end, with
// the fault's window shaded and named by its situation; strategies whose lines
// are the same over the whole run say so in the legend.
func TestChartsShadeTheFaultOverTheRun(t *testing.T) {
	charts := Charts(reports(t))
	require.Len(t, charts, 2*len(Cases))
	for _, c := range charts {
		assert.Equal(t, defaultDuration.Seconds(), c.End, c.Title)
		name := "outage 30-50 s"
		if strings.HasPrefix(c.Title, "sick-process") {
			name = "sick process 30-50 s"
		}
		assert.Equal(t, []chart.Band{{Name: name, From: 30, To: 50}}, c.Bands, c.Title)
		var b bytes.Buffer
		require.NoError(t, c.WriteSVG(&b))
		svg := b.String()
		assert.Contains(t, svg, ">"+name+"</text>", c.Title)
		assert.Contains(t, svg, `class="x-tick" x="700.0" y="376" text-anchor="middle">90</text>`, "%s: the axis ends at 90 s", c.Title)
	}
	// In the outage, the quorum dooms the calls the independent breakers do,
	// second by second.
	var b bytes.Buffer
	require.NoError(t, charts[0].WriteSVG(&b))
	assert.Contains(t, b.String(), ">quorum (= independent)</text>")
}

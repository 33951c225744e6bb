package simulate

import (
	"bytes"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline/fleet/internal/quorum"
	"github.com/resilience-go/pipeline/simulation"
	"github.com/resilience-go/pipeline/simulation/chart"
)

// failures is RunFailures(1, 0), run once for every test of the package.
var failures = sync.OnceValues(func() ([]*Report, error) { return RunFailures(1, 0) })

func failureReports(t *testing.T) []*Report {
	t.Helper()
	rs, err := failures()
	require.NoError(t, err)
	n := 0
	for _, f := range Failures {
		n += len(f.Runs)
	}
	require.Len(t, rs, n)
	return rs
}

// find returns the report of the failure named name labelled label.
func find(t *testing.T, rs []*Report, name, label string) *Report {
	t.Helper()
	r := findLabel(rs, name, label)
	require.NotNil(t, r, "%s: %s", name, label)
	return r
}

// A third of the fleet sees every call fail: 67 of 200 processes report
// open, and the default quorum needs more than half of the 200 seen, 101.
// So the quorum opens no healthy process, exactly as without sharing;
// below a third (Fraction 0.25: 51 needed) it opens every one of them,
// as naive sharing does.
func TestZoneOutageOpensNoHealthyProcessUnderTheDefaultFraction(t *testing.T) {
	rs := failureReports(t)
	zone := 0
	for i := range defaultProcesses {
		if find(t, rs, "zone", "quorum").Reached(i) {
			zone++
		}
	}
	require.Equal(t, 67, zone)
	require.Greater(t, quorum.Need(defaultProcesses, 0, quorum.DefaultFraction), zone, "the default quorum is out of the zone's reach")
	require.LessOrEqual(t, quorum.Need(defaultProcesses, 0, 0.25), zone, "a quarter is within it")

	ind, q := find(t, rs, "zone", "independent"), find(t, rs, "zone", "quorum")
	_, stopped := q.spared()
	assert.Zero(t, stopped, "no healthy process stopped")
	assert.Zero(t, q.SparedRefused)
	assert.Zero(t, q.Follows, "no break forced")
	assert.Equal(t, ind.Seconds, q.Seconds, "the same calls as without sharing, second by second")
	d, ok := q.TimeToOpen(1, true)
	require.True(t, ok, "every process of the zone opened")
	assert.Less(t, d, 3*time.Second, "on its own fifth failure")

	for _, label := range []string{"quorum, Fraction 0.25", "naive"} {
		r := find(t, rs, "zone", label)
		spared, stopped := r.spared()
		assert.Equal(t, 133, spared, label)
		assert.Equal(t, spared, stopped, "%s: every healthy process stopped", label)
		d, ok := r.TimeToStop(1, false)
		require.True(t, ok, label)
		assert.Less(t, d, 5*time.Second, "%s: within two refreshes of the zone's trips", label)
		assert.Greater(t, r.SparedRefused, 5000, "%s: refusing thousands of calls the dependency would serve", label)
	}
}

// The same seed gives the same report, drawing from every stream the
// failures add (the restarts', the slow Redis's), and another seed gives
// another. (A fleet of 50 keeps it short under the race detector;
// cmd/simulate's test compares two whole runs of the command.)
func TestFailuresAreDeterministic(t *testing.T) {
	run := func(seed uint64) *Report {
		r, err := Run(Config{Seed: seed, Processes: 50, Strategy: Quorum, Situation: Outage, Rates: UnevenRates, Redis: SlowRedis,
			Restart: Restart{Share: 0.25, During: simulation.Interval{From: 35 * time.Second, To: 45 * time.Second}}})
		require.NoError(t, err)
		require.NotEmpty(t, r.Restarts)
		require.Positive(t, r.FailedRounds)
		return r
	}
	first := run(1)
	assert.Equal(t, first, run(1))
	other := run(2)
	assert.NotEqual(t, first.String(), other.String())
	assert.NotEqual(t, first.Restarts, other.Restarts, "other processes restarted")
}

// Each failure has its chart, over the run's 90 s, with the outage's band
// and those of the restarts and of Redis's absence, and a line per run.
func TestFailureCharts(t *testing.T) {
	rs := failureReports(t)
	bands := map[string][]chart.Band{
		"restarts":     {{Name: "outage 30-50 s", From: 30, To: 50}, {Name: "restarts 35-45 s", From: 35, To: 45}},
		"slow-redis":   {{Name: "outage 30-50 s", From: 30, To: 50}},
		"absent-redis": {{Name: "Redis outage 20-40 s", From: 20, To: 40}, {Name: "outage 30-50 s", From: 30, To: 50}},
		"zone":         {{Name: "zone outage 30-50 s", From: 30, To: 50}},
	}
	require.Len(t, Failures, len(bands))
	for _, f := range Failures {
		c, ok := f.Chart(rs)
		require.True(t, ok, f.Name)
		assert.Equal(t, defaultDuration.Seconds(), c.End, f.Name)
		assert.Equal(t, bands[f.Name], c.Bands, f.Name)
		assert.Len(t, c.Lines, len(f.Runs), f.Name)
		var b bytes.Buffer
		require.NoError(t, c.WriteSVG(&b), f.Name)
		if f.Name == "zone" {
			assert.Contains(t, b.String(), ">quorum (= independent)</text>", "the default quorum refuses what independent breakers do")
		}
	}
	_, ok := Failures[0].Chart(nil)
	assert.False(t, ok)
}

// The summary carries each case's comparisons, among them the claims the
// tests of the Redis cases check.
func TestFailureSummary(t *testing.T) {
	s := FailureSummary(failureReports(t))
	for _, want := range []string{
		"restarts: outage 30-50 s",
		"quorum: restarted 50 processes, 35s to 44.8s; doomed calls before stopping 0 to 0",
		"quorum, Redis 400 ms: each breaker opened 0s to 0.4s later than with Redis instant",
		"quorum, Redis absent: doomed calls, independent / it: 1.12; the same calls as independent until 40s",
		"quorum: doomed calls, independent / it: 1.00; the same calls as independent throughout",
	} {
		assert.Contains(t, s, want)
	}
}

func TestFailureConfigRefusesImpossibleValues(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{Situation: ZoneOutage + 1}, "Config.Situation"},
		{Config{Restart: Restart{Share: -0.1}}, "Config.Restart.Share"},
		{Config{Restart: Restart{Share: math.NaN()}}, "Config.Restart.Share"},
		{Config{Restart: Restart{Share: 1.5}}, "Config.Restart.Share"},
		{Config{Restart: Restart{Share: 0.5}}, "Config.Restart.During"},
		{Config{Restart: Restart{Share: 0.5, During: simulation.Interval{From: 80 * time.Second, To: 100 * time.Second}}}, "Config.Restart.During"},
	} {
		assert.ErrorContains(t, c.cfg.Validate(), c.want)
	}
	assert.NoError(t, Config{Restart: Restart{During: simulation.Interval{From: -1}}}.Validate(), "no restart, no window needed")
	_, err := Run(Config{Strategy: Quorum, Redis: simulation.Healthy{P50: -1}})
	assert.ErrorContains(t, err, "Config.Redis")
}

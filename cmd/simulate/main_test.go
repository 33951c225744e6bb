package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline/simulation"
)

// simulate runs the command with args and returns its exit code and output.
func simulate(args ...string) (code int, stdout, stderr string) {
	var out, errs bytes.Buffer
	code = run(args, &out, &errs)
	return code, out.String(), errs.String()
}

func TestList(t *testing.T) {
	code, out, _ := simulate("-list")
	require.Equal(t, 0, code)
	assert.Contains(t, out, "retry-storm ")
	assert.Contains(t, out, "synchronized-probe ")
	assert.Contains(t, out, "hedging ")
	assert.Contains(t, out, "slow-call-trip ")
	assert.Contains(t, out, "ramp-vs-cliff ")
	assert.NotContains(t, out, "[pending: ", "every scenario can run")
}

func TestRunsAScenarioAndWritesItsCharts(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "charts")
	code, out, errs := simulate("-scenario", "retry-storm", "-out", dir, "-series")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "retry-storm/no-budget (seed 1)")
	assert.Contains(t, out, "retry-storm/default-budget (seed 1)")
	assert.Contains(t, out, "second\toffered\tattempts")
	for _, name := range []string{"retry-storm-no-budget.svg", "retry-storm-default-budget.svg", "retry-storm-attempts-per-second.svg"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err, name)
		assert.True(t, bytes.HasPrefix(b, []byte("<svg ")), name)
		assert.Contains(t, string(b), ">failures 10-40 s</text>", "%s: the fault's window in the legend", name)
	}
	// The page holds the scenario: its claim, its figures, and its charts as
	// the files hold them.
	assert.Contains(t, out, "wrote "+filepath.Join(dir, "index.html")+"\n")
	page, err := os.ReadFile(filepath.Join(dir, "index.html"))
	require.NoError(t, err)
	checkPage(t, page, []string{"retry-storm"}, 3)
	for _, want := range []string{"a budget keeps the load on a failing dependency near 1x", "retry-storm/no-budget (seed 1): 1 process(es) x 100 calls/s for 60s", "<figcaption>retry-storm-attempts-per-second.svg</figcaption>"} {
		assert.Contains(t, string(page), want)
	}
	chart, err := os.ReadFile(filepath.Join(dir, "retry-storm-default-budget.svg"))
	require.NoError(t, err)
	assert.Contains(t, string(page), string(chart), "the chart inlined as written")

	// The same seed prints the same reports; another seed, others.
	_, again, _ := simulate("-scenario", "retry-storm", "-out", dir, "-series")
	assert.Equal(t, out, again)
	_, other, _ := simulate("-scenario", "retry-storm", "-out", "", "-seed", "2")
	assert.Contains(t, other, "(seed 2)")
	assert.NotContains(t, other, "wrote ")
}

func TestRunsTheHedgingScenario(t *testing.T) {
	dir := t.TempDir()
	code, out, errs := simulate("-scenario", "hedging", "-out", dir, "-series")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "hedging/no-hedge (seed 1)")
	assert.Contains(t, out, "hedging/p95-hedge (seed 1)")
	assert.Contains(t, out, "  hedges        ")
	assert.Contains(t, out, "\tprobes\thedges\n", "the hedged run's series has a hedges column")
	for _, name := range []string{"hedging-no-hedge.svg", "hedging-p95-hedge.svg", "hedging-latency-of-served-calls-p90-to-p99-9.svg", "hedging-attempts-per-second.svg"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err, name)
		assert.True(t, bytes.HasPrefix(b, []byte("<svg ")), name)
	}
}

func TestRunsTheSlowCallTripScenario(t *testing.T) {
	dir := t.TempDir()
	code, out, errs := simulate("-scenario", "slow-call-trip", "-out", dir, "-series")
	require.Equal(t, 0, code, errs)
	for _, name := range []string{"median-3x", "chased-p99", "fixed-p99"} {
		assert.Contains(t, out, "slow-call-trip/"+name+" (seed 1)")
	}
	assert.Contains(t, out, "  slow calls    ")
	assert.Contains(t, out, "judged slow by p99 of the last 30s;")
	assert.Contains(t, out, "never reached 0.5")
	assert.Contains(t, out, "(first at 75.01s: slow calls)")
	assert.Contains(t, out, "\tprobes\tjudged\tslow\tslow_fraction\tthreshold_ms\n", "a judged run's series has the judge's columns")
	for _, name := range []string{"slow-call-trip-median-3x.svg", "slow-call-trip-slow-fraction-of-the-trip-window.svg", "slow-call-trip-slow-call-threshold.svg", "slow-call-trip-served-per-second.svg"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err, name)
		assert.True(t, bytes.HasPrefix(b, []byte("<svg ")), name)
	}
}

func TestRunsTheRampVsCliffScenario(t *testing.T) {
	dir := t.TempDir()
	code, out, errs := simulate("-scenario", "ramp-vs-cliff", "-out", dir, "-series")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "ramp-vs-cliff/cliff (seed 1)")
	assert.Contains(t, out, "ramp-vs-cliff/ramp (seed 1)")
	assert.Contains(t, out, "  ramps         1 started: 1 closed the breaker, 0 re-opened it\n")
	assert.Contains(t, out, "\tprobes\tramping\tramp_fraction\tramp_held\n", "the ramped run's series has the ramp's columns")
	assert.Contains(t, out, "served over the 45s after the outage (calls offered in [35s, 80s) and served, of 1350 offered):\n"+
		"  ramp-vs-cliff/cliff       86\n"+
		"  ramp-vs-cliff/ramp-alone  1028 (11.95 x the first)\n"+
		"  ramp-vs-cliff/ramp      1315 (15.29 x the first)\n")
	for _, name := range []string{"ramp-vs-cliff-cliff.svg", "ramp-vs-cliff-ramp.svg", "ramp-vs-cliff-served-per-second.svg",
		"ramp-vs-cliff-share-of-calls-the-breaker-admitted.svg", "ramp-vs-cliff-the-ramp-s-admitted-fraction-and-how-often-slow-calls-held-it-ramp.svg",
		"ramp-vs-cliff-the-ramp-s-admitted-fraction-and-how-often-slow-calls-held-it-ramp-alone.svg", "ramp-vs-cliff-ramp-alone.svg"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err, name)
		assert.True(t, bytes.HasPrefix(b, []byte("<svg ")), name)
	}
}

func TestRefusesWhatItCannotRun(t *testing.T) {
	for _, args := range [][]string{
		{"-scenario", "no-such"},
		{"-bogus"},
		{"extra"},
	} {
		code, out, errs := simulate(args...)
		assert.Equal(t, 2, code, "%v", args)
		assert.Empty(t, out, "%v", args)
		assert.NotEmpty(t, errs, "%v", args)
	}
}

// The concurrency limits' scenario runs through the same command, listed
// among the calls' scenarios, after the others.
func TestRunsTheAdaptiveLimitScenario(t *testing.T) {
	dir := t.TempDir()
	code, out, errs := simulate("-scenario", "adaptive-limit", "-out", dir)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "== adaptive-limit: ")
	assert.Contains(t, out, "  adaptive-limit/adaptive       16234  24000\n")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, len(entries), 4, "a chart per variant and the comparisons")
	_, list, _ := simulate("-list")
	assert.Contains(t, list, "\nadaptive-limit ")
}

func TestArrivalsFlag(t *testing.T) {
	code, out, _ := simulate("-scenario", "retry-storm", "-arrivals", "poisson", "-out", "")
	require.Equal(t, 0, code)
	assert.Contains(t, out, "calls/s (Poisson arrivals) for 60s")
	code, out, _ = simulate("-scenario", "retry-storm", "-out", "")
	require.Equal(t, 0, code)
	assert.NotContains(t, out, "Poisson")
	code, _, errs := simulate("-arrivals", "bursty")
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "-arrivals must be even or poisson")
}

func TestTheMetastabilityGridPrintsItsVerdicts(t *testing.T) {
	dir := t.TempDir()
	code, out, errs := simulate("-scenario", "metastability", "-out", dir)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "verdict card: PASS: 16 of 16 cells pass; escapes 4 of the 4 cells where the baseline stays stuck")
	for _, name := range []string{"metastability-availability-retries.svg", "metastability-availability-card.svg", "metastability-availability-throttle.svg"} {
		_, err := os.Stat(filepath.Join(dir, name))
		assert.NoError(t, err, name)
	}
	// The page shows the grid as its heat maps, with the table and verdicts.
	page, err := os.ReadFile(filepath.Join(dir, "index.html"))
	require.NoError(t, err)
	checkPage(t, page, []string{"metastability"}, 3)
	for _, want := range []string{">metastability: availability, retries</text>", ">metastability: availability, card</text>", "verdict card: PASS: 16 of 16 cells pass", "failing cells outlined"} {
		assert.Contains(t, string(page), want)
	}
}

// The page of a whole run holds every scenario, in the order they ran, and
// every chart written beside it. (Left out under the race detector, where
// the whole run takes over a minute; the tests above check the page of each
// kind of scenario.)
func TestThePageHoldsEveryScenario(t *testing.T) {
	if raced {
		t.Skip("the whole run takes over a minute under the race detector; TestThePageIsOneSelfContainedDocument checks a page of every scenario")
	}
	dir := t.TempDir()
	code, _, errs := simulate("-out", dir)
	require.Equal(t, 0, code, errs)
	svgs, err := filepath.Glob(filepath.Join(dir, "*.svg"))
	require.NoError(t, err)
	var names []string
	for _, s := range scenarios(simulation.Even) {
		names = append(names, s.name)
	}
	page, err := os.ReadFile(filepath.Join(dir, "index.html"))
	require.NoError(t, err)
	checkPage(t, page, names, len(svgs))
	for _, svg := range svgs {
		assert.Contains(t, string(page), "<figcaption>"+filepath.Base(svg)+"</figcaption>")
	}
}

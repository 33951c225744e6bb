package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const sample = `goos: linux
goarch: amd64
pkg: github.com/resilience-go/pipeline/bench
BenchmarkFloor/now-2          	 1000	  50.0 ns/op	 0 B/op	 0 allocs/op
BenchmarkFloor/now-2          	 1000	  60.0 ns/op	 0 B/op	 0 allocs/op
BenchmarkFloor/now-2          	 1000	  70.0 ns/op	 0 B/op	 0 allocs/op
BenchmarkFloor/withtimeout-2  	 1000	 600 ns/op	 272 B/op	 4 allocs/op
BenchmarkBreaker/ok/ours-2    	 1000	 100 ns/op	 0 B/op	 0 allocs/op
BenchmarkBreaker/ok/ours-2    	 1000	 110 ns/op	 0 B/op	 0 allocs/op
BenchmarkBreaker/ok/ours-2    	 1000	 900 ns/op	 0 B/op	 0 allocs/op
BenchmarkBreaker/ok/gobreaker-2	 1000	 120 ns/op	 0 B/op	 0 allocs/op
BenchmarkBreaker/ok/failsafe-2	 1000	 440 ns/op	 384 B/op	 14 allocs/op
BenchmarkRetryBreaker/ok/ours-2	 1000	 300 ns/op	 16 B/op	 1 allocs/op
BenchmarkRetryBreaker/ok/failsafe-2	 1000	 1000 ns/op	 512 B/op	 17 allocs/op
BenchmarkCard/ok/ours-2       	 1000	 400 ns/op	 384 B/op	 6 allocs/op
BenchmarkCard/ok/failsafe-2   	 1000	 2000 ns/op	 1032 B/op	 26 allocs/op
BenchmarkCard/fail/ours-2     	 1000	 3000 ns/op	 496 B/op	 7 allocs/op
BenchmarkCard/fail/failsafe-2 	 1000	 2000 ns/op	 2440 B/op	 46 allocs/op
BenchmarkCardHedged/ok/failsafe-2	 1000	 4000 ns/op	 2216 B/op	 42 allocs/op
PASS
`

func parseSample(t *testing.T) *results {
	t.Helper()
	rs, err := parse(strings.NewReader(sample))
	require.NoError(t, err)
	return rs
}

func TestParseTakesMediansAndDropsGOMAXPROCS(t *testing.T) {
	rs := parseSample(t)
	assert.Equal(t, "Floor/now", rs.order[0])
	now, ok := rs.get("Floor/now")
	require.True(t, ok)
	assert.Equal(t, 3, now.runs)
	assert.InDelta(t, 60.0, now.ns.center, 1e-9)
	b, ok := rs.get("Breaker/ok/ours")
	require.True(t, ok)
	assert.InDelta(t, 110.0, b.ns.center, 1e-9, "the median ignores the 900 ns outlier")
	assert.Equal(t, "Breaker/ok", b.group())
	assert.Equal(t, "ours", b.lib())
	fs, _ := rs.get("Breaker/ok/failsafe")
	assert.InDelta(t, 14.0, fs.allocs.center, 1e-9)
	assert.InDelta(t, 384.0, fs.bytes.center, 1e-9)
}

// line returns the table line of the named benchmark.
func line(t *testing.T, table, name string) string {
	t.Helper()
	for _, l := range strings.Split(table, "\n") {
		if strings.HasPrefix(l, "| "+name+" |") {
			return l
		}
	}
	t.Fatalf("no row %s in\n%s", name, table)
	return ""
}

func TestTableRatiosAndTargets(t *testing.T) {
	var out bytes.Buffer
	writeTable(&out, parseSample(t))
	table := out.String()

	breaker := line(t, table, "Breaker/ok/ours")
	assert.Contains(t, breaker, "0.92× gobreaker, 0.25× failsafe")
	assert.Contains(t, breaker, "1.83× now")
	assert.Contains(t, breaker, "≤ 1× gobreaker, ≤ 0 allocs")
	assert.True(t, strings.HasSuffix(breaker, "| yes |"), breaker)

	retry := line(t, table, "RetryBreaker/ok/ours")
	assert.Contains(t, retry, "**no**: time 0.30×, 1 allocs")

	card := line(t, table, "Card/ok/ours")
	assert.Contains(t, card, "≤ 6 allocs (withtimeout + 2)")
	assert.True(t, strings.HasSuffix(card, "| yes |"), card)

	fail := line(t, table, "Card/fail/ours")
	assert.Contains(t, fail, "**no**: time 1.50× (the target, 500 ns, is below the withtimeout floor)")

	hedged := line(t, table, "CardHedged/ok/ours")
	assert.Contains(t, hedged, "| missing |")
	assert.Less(t, strings.Index(table, "CardHedged/ok/ours"), strings.Index(table, "CardHedged/ok/failsafe"),
		"the missing row comes first in its group")

	peer := line(t, table, "Breaker/ok/gobreaker")
	assert.True(t, strings.HasSuffix(peer, "| | | |"), "peer rows carry no ratios or targets: %s", peer)
}

func TestFitSlope(t *testing.T) {
	slope, icept, ok := fit([]float64{0, 1, 2, 4, 8}, []float64{20, 22, 24, 28, 36})
	require.True(t, ok)
	assert.InDelta(t, 2.0, slope, 1e-9)
	assert.InDelta(t, 20.0, icept, 1e-9)
	_, _, ok = fit([]float64{1, 1}, []float64{3, 4})
	assert.False(t, ok, "one distinct size has no slope")
}

func TestRunRendersSavedOutput(t *testing.T) {
	core := "BenchmarkDirect-2 1000 2.0 ns/op 0 B/op 0 allocs/op\n" +
		"BenchmarkExecute/stages=0-2 1000 20.0 ns/op 0 B/op 0 allocs/op\n" +
		"BenchmarkExecute/stages=2-2 1000 26.0 ns/op 0 B/op 0 allocs/op\n"
	file := filepath.Join(t.TempDir(), "raw.txt")
	require.NoError(t, os.WriteFile(file, []byte(sample+string(coreMarker)+core), 0o644))
	var out bytes.Buffer
	require.NoError(t, run(6, "", ".", true, "..", "", file, &out))
	assert.Contains(t, out.String(), "| Breaker/ok/ours |")
	assert.Contains(t, out.String(), "Per-stage slope of Execute: 3.00 ns per stage")
	assert.Contains(t, out.String(), "Execute with no stages costs 18.0 ns more than calling the work directly.")
}

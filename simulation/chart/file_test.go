package chart_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline/simulation/chart"
)

func TestFileName(t *testing.T) {
	assert.Equal(t, "synchronized-probe-probes-per-100-ms", chart.FileName("synchronized-probe: probes per 100 ms"))
	assert.Equal(t, "retry-storm-no-budget", chart.FileName("retry-storm/no-budget"))
	assert.Equal(t, "a-b", chart.FileName("  A -- b!"))
}

func TestWriteSVGFile(t *testing.T) {
	dir := t.TempDir()
	c := chart.Chart{Title: "Doomed calls: per second", Lines: []chart.Line{{Name: "a", Values: []float64{1, 2, 3}}}}
	path, err := c.WriteSVGFile(dir)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, "doomed-calls-per-second.svg"), path)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Contains(t, string(b), "<svg")
}

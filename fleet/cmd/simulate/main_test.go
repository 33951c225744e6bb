package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline/fleet/simulate"
)

// The command prints every report and the summary, then those of the
// fleet's failures, and writes two charts per case and one per failure,
// each a standalone SVG document; the same seed prints and writes the same
// bytes. (A fleet of 20 keeps the test short under the race detector;
// fleet/simulate's tests check the figures of 200.)
func TestRun(t *testing.T) {
	output := func() (string, map[string]string) {
		dir := t.TempDir()
		var stdout, stderr bytes.Buffer
		require.Equal(t, 0, run([]string{"-seed", "1", "-processes", "20", "-out", dir}, &stdout, &stderr), stderr.String())
		files, err := filepath.Glob(filepath.Join(dir, "*.svg"))
		require.NoError(t, err)
		svgs := map[string]string{}
		for _, f := range files {
			b, err := os.ReadFile(f)
			require.NoError(t, err)
			svgs[filepath.Base(f)] = string(b)
		}
		return strings.ReplaceAll(stdout.String(), dir, "DIR"), svgs
	}
	out, svgs := output()
	for _, want := range []string{"outage/independent (seed 1): 20 processes", "sick-process/quorum (seed 1)", "doomed calls, independent / quorum",
		"restarts/quorum (seed 1): 20 processes", "slow-redis/quorum, Redis slow (seed 1)", "zone/quorum, Fraction 0.25 (seed 1)",
		"absent-redis: outage 30-50 s", "quorum: restarted 5 processes", "wrote DIR/fleet-failure-zone.svg"} {
		assert.Contains(t, out, want)
	}
	assert.Len(t, svgs, 2*len(simulate.Cases)+len(simulate.Failures))
	assert.Contains(t, svgs, "fleet-sick-process-wrongly-refused-calls-per-second.svg")
	for _, f := range simulate.Failures {
		assert.Contains(t, svgs, "fleet-failure-"+f.Name+".svg")
	}
	assert.Contains(t, svgs["fleet-failure-absent-redis.svg"], ">fleet failure absent-redis: doomed calls per second</text>")
	for name, svg := range svgs {
		assert.True(t, strings.HasPrefix(svg, "<svg "), name)
	}
	again, svgsAgain := output()
	assert.Equal(t, out, again)
	assert.Equal(t, svgs, svgsAgain)
}

func TestRunRefusesBadArguments(t *testing.T) {
	var stdout, stderr bytes.Buffer
	assert.Equal(t, 2, run([]string{"-nope"}, &stdout, &stderr))
	assert.Equal(t, 2, run([]string{"extra"}, &stdout, &stderr))
	assert.Contains(t, stderr.String(), "unexpected arguments")
}

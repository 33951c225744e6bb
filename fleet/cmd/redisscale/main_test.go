package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The fit recovers a quadratic exactly from points on it, and is the
// least-squares one for points off it.
func TestFitQuadratic(t *testing.T) {
	xs := []float64{25, 50, 100, 200, 400}
	ys := make([]float64, len(xs))
	for i, x := range xs {
		ys[i] = 0.002 + 3e-5*x + 1.1e-6*x*x
	}
	q, err := fitQuadratic(xs, ys)
	require.NoError(t, err)
	assert.InDelta(t, 0.002, q.a, 1e-9)
	assert.InDelta(t, 3e-5, q.b, 1e-11)
	assert.InDelta(t, 1.1e-6, q.c, 1e-13)

	// A straight line fits with no square term.
	q, err = fitQuadratic([]float64{1, 2, 3, 4}, []float64{1, 3, 5, 7})
	require.NoError(t, err)
	assert.InDelta(t, 0, q.c, 1e-9)
	assert.InDelta(t, 2, q.b, 1e-9)

	_, err = fitQuadratic([]float64{1, 1, 1}, []float64{1, 2, 3})
	assert.Error(t, err)
	_, err = fitQuadratic([]float64{1, 2}, []float64{1, 2})
	assert.Error(t, err)
}

func TestParseInfo(t *testing.T) {
	in, err := parseInfo("# CPU\r\nused_cpu_sys:1.5\r\nused_cpu_user:2.25\r\n# Stats\r\ntotal_net_output_bytes:1000\r\ntotal_commands_processed:42\r\n")
	require.NoError(t, err)
	assert.InDelta(t, 3.75, in.cpu, 1e-9)
	assert.InDelta(t, 1000, in.out, 0)
	assert.InDelta(t, 42, in.commands, 0)
	_, err = parseInfo("used_cpu_sys:1\r\n")
	assert.ErrorContains(t, err, "used_cpu_user")
}

func TestFlags(t *testing.T) {
	var out, errs bytes.Buffer
	assert.Equal(t, 2, run([]string{"-processes", "25,x"}, &out, &errs))
	assert.Contains(t, errs.String(), "-processes must list integers of at least 1")
	errs.Reset()
	assert.Equal(t, 2, run([]string{"-processes", "0"}, &out, &errs), "no fleet of no process")
	errs.Reset()
	assert.Equal(t, 2, run([]string{"-breakers", "-1"}, &out, &errs))
	assert.Contains(t, errs.String(), "-breakers must list integers of at least 0")
	errs.Reset()
	assert.Equal(t, 2, run([]string{"-window", "0s"}, &out, &errs))
	assert.Contains(t, errs.String(), "-window")
}

package latency_test

import (
	"math"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/resilience-go/pipeline/latency"

	"github.com/resilience-go/pipeline/internal/testcheck"
)

// FuzzConfig checks latency.Config.Validate and the Estimator a valid Config
// builds:
//
//   - Validate never panics, and returns nil exactly when New succeeds;
//   - each of its joined errors names, as "Config.<Field>", a field the caller
//     set (a zero field means its default, so it is never to blame);
//   - a valid Config builds an Estimator whose Window is Config.Window, or
//     DefaultWindow for 0;
//   - after samples of any duration are recorded, one every step on a fake
//     clock, Quantile(now, q) for any q returns a duration in [0, 2^36 ns] and a
//     count of at most the samples recorded, 0 samples meaning a duration of 0;
//     with no time passing (step 0) it counts every sample, and a window of
//     silence later it counts none.
func FuzzConfig(f *testing.F) {
	for _, w := range []int64{0, 1, -1, 9, 10, 999, 1000, int64(time.Second), math.MaxInt32, math.MaxInt64, math.MinInt64} {
		for _, s := range []int{0, 1, -1, 10, latency.MaxSlices, latency.MaxSlices + 1, math.MaxInt32, math.MaxInt, math.MinInt} {
			f.Add(w, s, int64(time.Millisecond), 0.95, int64(0), []byte{1, 2, 3})
		}
	}
	for _, q := range []float64{0, 1, -1, 0.5, 0.99, math.SmallestNonzeroFloat64, 1 + 1e-15, math.NaN(), math.Inf(1), math.Inf(-1), math.MaxFloat64} {
		f.Add(int64(0), 0, int64(math.MaxInt64), q, int64(time.Second), []byte{0, 10, 63, 64, 255})
	}
	for _, step := range []int64{1, -1, int64(time.Hour), math.MaxInt64, math.MinInt64} {
		f.Add(int64(10), 10, int64(math.MinInt64), 0.5, step, []byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11})
	}

	f.Fuzz(func(t *testing.T, window int64, slices int, sample int64, q float64, step int64, shifts []byte) {
		clock := clockwork.NewFakeClock()
		cfg := latency.Config{Window: time.Duration(window), Slices: slices, Clock: clock}
		err := testcheck.Validate(t, cfg, cfg.Validate)
		e, errNew := latency.New(cfg)
		if (err == nil) != (errNew == nil) {
			t.Fatalf("Validate() = %v but New returned %v for %+v", err, errNew, cfg)
		}
		if err != nil {
			testcheck.Blames(t, err, map[string]bool{"Config.Window": window != 0, "Config.Slices": slices != 0})
			return
		}
		span := cfg.Window
		if span == 0 {
			span = latency.DefaultWindow
		}
		if e.Window() != span {
			t.Fatalf("Window() = %v for %+v", e.Window(), cfg)
		}
		// Steps stay short of overflowing the fake clock over 64 samples.
		advance := time.Duration(uint64(step) % uint64(1000*time.Hour))
		recorded := 0
		for _, shift := range shifts[:min(len(shifts), 64)] {
			clock.Advance(advance)
			e.Record(e.Now(), time.Duration(sample>>(shift%64)))
			recorded++
			check(t, e, q, recorded)
		}
		if n := check(t, e, q, recorded); advance == 0 && n != recorded {
			t.Fatalf("Quantile counts %d samples of the %d recorded at one instant", n, recorded)
		}
		clock.Advance(span)
		if n := check(t, e, q, recorded); n != 0 {
			t.Fatalf("Quantile counts %d samples after a window of silence (%v)", n, span)
		}
	})
}

// check reads the q-th quantile of e at its clock's now and checks it against
// recorded, the number of samples ever recorded; it returns the count.
func check(t *testing.T, e *latency.Estimator, q float64, recorded int) int {
	t.Helper()
	d, n := e.Quantile(e.Now(), q)
	if d < 0 || d > 1<<36 || n < 0 || n > recorded || (n == 0 && d != 0) {
		t.Fatalf("Quantile(%v) = %v, %d after %d samples", q, d, n, recorded)
	}
	return n
}

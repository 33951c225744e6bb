package histogram

import (
	"math/rand/v2"
	"testing"
	"time"
)

// benchDurations are latencies spread over 1 ms .. 200 ms, so that the bucket
// computation sees varied input.
var benchDurations = func() (ds [1024]time.Duration) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range ds {
		ds[i] = time.Millisecond + time.Duration(r.Int64N(int64(199*time.Millisecond)))
	}
	return ds
}()

// The estimator's default window: 30 s in 10 slices.
const (
	benchSpan   = 30 * time.Second
	benchSlices = 10
)

// BenchmarkWindowAdd is one sample into a window, with time moving 1 µs per
// sample, so a slice of the default 3 s rotates every 3 million samples.
func BenchmarkWindowAdd(b *testing.B) {
	w := newWindow(benchSpan, benchSlices)
	b.ReportAllocs()
	var now time.Duration
	for i := 0; b.Loop(); i++ {
		now += time.Microsecond
		w.Add(now, benchDurations[i%len(benchDurations)])
	}
}

// BenchmarkWindowQuantile is a memoized read of a window holding 10 000
// samples.
func BenchmarkWindowQuantile(b *testing.B) {
	w := newWindow(benchSpan, benchSlices)
	for i := range 10_000 {
		w.Add(0, benchDurations[i%len(benchDurations)])
	}
	b.ReportAllocs()
	var sink time.Duration
	for b.Loop() {
		d, _ := w.Quantile(time.Second, 0.95)
		sink += d
	}
	_ = sink
}

// BenchmarkWindowAddQuantile is what a breaker pays per successful attempt: one
// sample and one memoized read at the same now, under constant traffic (the
// read recomputes once per samples/32 adds).
func BenchmarkWindowAddQuantile(b *testing.B) {
	w := newWindow(5*time.Minute, benchSlices)
	var now time.Duration
	for i := range 10_000 {
		now += 30 * time.Microsecond
		w.Add(now, benchDurations[i%len(benchDurations)])
	}
	b.ReportAllocs()
	var sink time.Duration
	for i := 0; b.Loop(); i++ {
		now += time.Microsecond
		w.Add(now, benchDurations[i%len(benchDurations)])
		d, _ := w.Quantile(now, 0.5)
		sink += d
	}
	_ = sink
}

// BenchmarkWindowQuantileRecompute is a read that must scan the histogram: q
// alternates, so the memo never hits.
func BenchmarkWindowQuantileRecompute(b *testing.B) {
	w := newWindow(benchSpan, benchSlices)
	for i := range 10_000 {
		w.Add(0, benchDurations[i%len(benchDurations)])
	}
	qs := [2]float64{0.5, 0.95}
	b.ReportAllocs()
	var sink time.Duration
	for i := 0; b.Loop(); i++ {
		d, _ := w.Quantile(time.Second, qs[i&1])
		sink += d
	}
	_ = sink
}

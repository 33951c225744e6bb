package histogram

import (
	"math"
	"slices"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const ms = time.Millisecond

func mustWindow(t *testing.T, span time.Duration, n int) *Window {
	t.Helper()
	w, err := New(span, n)
	require.NoError(t, err)
	return w
}

func TestNewRefuses(t *testing.T) {
	for _, tc := range []struct {
		span   time.Duration
		slices int
		want   []string
	}{
		{0, 10, []string{"histogram: span must be positive, got 0s"}},
		{-time.Second, 10, []string{"histogram: span must be positive, got -1s"}},
		{time.Second, 0, []string{"histogram: slices must be between 1 and 1000, got 0"}},
		{time.Second, -3, []string{"histogram: slices must be between 1 and 1000, got -3"}},
		{time.Hour, 1001, []string{"histogram: slices must be between 1 and 1000, got 1001"}},
		{9, 10, []string{"histogram: span must be at least slices nanoseconds (a slice of at least 1ns), got span 9ns with slices 10"}},
		{-time.Second, 0, []string{"span must be positive, got -1s", "slices must be between 1 and 1000, got 0"}},
	} {
		w, err := New(tc.span, tc.slices)
		assert.Nil(t, w)
		require.Error(t, err, "New(%v, %d)", tc.span, tc.slices)
		for _, s := range tc.want {
			assert.Contains(t, err.Error(), s)
		}
	}
	w, err := New(10, 10) // a slice of 1ns is the smallest allowed
	require.NoError(t, err)
	assert.Equal(t, time.Duration(10), w.Span())
}

func TestEmptyWindowReportsNone(t *testing.T) {
	w := mustWindow(t, 10*time.Second, 10)
	d, n := w.Quantile(0, 0.5)
	assert.Equal(t, time.Duration(0), d)
	assert.Equal(t, 0, n)
	assert.Equal(t, 10*time.Second, w.Span())
}

// TestQuantileOfKnownSamples checks quantiles of 1..100 ms against the exact
// order statistic: same bucket, so within one bucket width.
func TestQuantileOfKnownSamples(t *testing.T) {
	w := mustWindow(t, time.Minute, 6)
	var all []time.Duration
	for i := 100; i >= 1; i-- { // order of arrival does not matter
		d := time.Duration(i) * ms
		all = append(all, d)
		w.Add(time.Duration(i)*time.Millisecond, d) // all within one slice
	}
	slices.Sort(all)
	for _, tc := range []struct {
		q    float64
		rank int
	}{
		{0, 1}, {0.01, 1}, {0.015, 2}, {0.07, 7}, {0.5, 50}, {0.9, 90}, {0.95, 95}, {0.99, 99}, {1, 100},
	} {
		d, n := w.Quantile(time.Second, tc.q)
		require.Equal(t, 100, n)
		exact := all[tc.rank-1]
		i := bucketOf(exact)
		assert.Equal(t, i, bucketOf(d), "q=%v: got %v, exact %v", tc.q, d, exact)
		assert.Less(t, (d - exact).Abs(), time.Duration(lower[i+1]-lower[i]), "q=%v", tc.q)
	}
}

func TestQuantileRank(t *testing.T) {
	for _, tc := range []struct {
		q    float64
		n    int
		want uint64
	}{
		{0, 5, 1}, {1, 5, 5}, {0.5, 1, 1}, {0.5, 2, 1}, {0.5, 3, 2}, {0.5, 4, 2},
		{0.95, 20, 19}, {0.95, 21, 20}, {0.07, 100, 7}, {0.99, 1000, 990}, {0.999, 1000, 999},
		{1e-9, 1, 1}, {0.5, math.MaxUint32, math.MaxUint32/2 + 1},
	} {
		assert.Equal(t, tc.want, rank(tc.q, tc.n), "rank(%v, %d)", tc.q, tc.n)
	}
}

func TestQuantileClampsQ(t *testing.T) {
	w := mustWindow(t, time.Second, 1)
	w.Add(0, 2*ms)
	w.Add(0, 50*ms)
	lo, _ := w.Quantile(0, 0)
	hi, _ := w.Quantile(0, 1)
	require.Less(t, lo, hi)
	for _, q := range []float64{-1, math.Inf(-1), math.NaN()} {
		d, n := w.Quantile(0, q)
		assert.Equal(t, lo, d, "q=%v reads as 0", q)
		assert.Equal(t, 2, n)
	}
	for _, q := range []float64{1.5, math.Inf(1)} {
		d, _ := w.Quantile(0, q)
		assert.Equal(t, hi, d, "q=%v reads as 1", q)
	}
}

func TestNegativeAndHugeDurations(t *testing.T) {
	w := mustWindow(t, time.Second, 1)
	w.Add(0, -time.Hour)
	d, n := w.Quantile(0, 0.5)
	assert.Equal(t, 1, n)
	assert.Less(t, d, time.Microsecond, "a negative sample counts as 0")
	w.Add(0, 3*time.Hour)
	w.Add(0, 5*time.Hour)
	d, n = w.Quantile(0, 1)
	assert.Equal(t, 3, n)
	assert.Equal(t, topBucket, bucketOf(d))
	assert.Less(t, d, time.Duration(1)<<36, "samples beyond the range read as under 68.7s")
}

// TestRotation steps a 10 s window of ten 1 s slices through time.
func TestRotation(t *testing.T) {
	w := mustWindow(t, 10*time.Second, 10)
	s := time.Second
	w.Add(0, ms)            // slice 0: expires when now reaches 10 s (held 10 s)
	w.Add(999*ms, 2*ms)     // slice 0 too: held only 9.001 s
	w.Add(3*s+200*ms, 3*ms) // slice 3: expires at 13 s
	w.Add(9*s+999*ms, 4*ms) // slice 9: expires at 19 s
	for _, step := range []struct {
		now  time.Duration
		want int
	}{
		{9*s + 999*ms, 4},
		{10 * s, 2}, // slice 0 left
		{12*s + 999*ms, 2},
		{13 * s, 1},        // slice 3 left
		{13 * s, 1},        // reading again changes nothing
		{18*s + 999*ms, 1}, //
		{19 * s, 0},        // idle for a span: nothing left
		{time.Hour, 0},
	} {
		_, n := w.Quantile(step.now, 0.5)
		assert.Equal(t, step.want, n, "samples at %v", step.now)
	}
	w.Add(time.Hour, 7*ms) // the window works again after a long gap
	d, n := w.Quantile(time.Hour, 0.5)
	assert.Equal(t, 1, n)
	assert.Equal(t, bucketOf(7*ms), bucketOf(d))
}

// TestRotationByAdd checks that Add rotates too, and that an expired slice's
// samples leave the total histogram, not just the count.
func TestRotationByAdd(t *testing.T) {
	w := mustWindow(t, 4*time.Second, 4)
	for range 10 {
		w.Add(0, 30*time.Second) // slow samples in slice 0
	}
	w.Add(4*time.Second, ms) // slice 4: slice 0 expires
	d, n := w.Quantile(4*time.Second, 1)
	assert.Equal(t, 1, n)
	assert.Equal(t, bucketOf(ms), bucketOf(d), "the slow samples are gone from the histogram")
	var sum uint32
	for _, c := range w.total {
		sum += c
	}
	assert.Equal(t, uint32(1), sum)
}

// TestIdleDecay checks that a window left idle for a span reports none, never the
// value it memoized before.
func TestIdleDecay(t *testing.T) {
	w := mustWindow(t, 30*time.Second, 10)
	for i := range 100 {
		w.Add(time.Duration(i)*10*ms, 40*ms)
	}
	d, n := w.Quantile(time.Second, 0.95)
	require.Equal(t, 100, n)
	require.NotZero(t, d)
	d, n = w.Quantile(29*time.Second+999*ms, 0.95) // last slice with samples: [0, 3s) still held
	assert.Equal(t, 100, n)
	assert.NotZero(t, d)
	d, n = w.Quantile(30*time.Second, 0.95)
	assert.Equal(t, 0, n)
	assert.Equal(t, time.Duration(0), d)
}

// TestTimeNeverRunsBackwards checks that an earlier now counts as the latest one:
// the sample lands in the current slice and nothing rotates back.
func TestTimeNeverRunsBackwards(t *testing.T) {
	s := time.Second
	w := mustWindow(t, 10*s, 10)
	w.Add(5*s, ms)
	w.Add(2*s, 2*ms) // counted in slice 5, not slice 2
	_, n := w.Quantile(3*s, 0.5)
	assert.Equal(t, 2, n)
	_, n = w.Quantile(14*s+999*ms, 0.5)
	assert.Equal(t, 2, n, "the late sample would have left at 12 s had it gone to slice 2")
	_, n = w.Quantile(15*s, 0.5)
	assert.Equal(t, 0, n)
}

// TestNegativeEpoch checks that slices align on multiples of the width on either
// side of zero.
func TestNegativeEpoch(t *testing.T) {
	s := time.Second
	w := mustWindow(t, 10*s, 10)
	w.Add(-500*ms, ms) // slice [-1s, 0)
	_, n := w.Quantile(8*s+999*ms, 0.5)
	assert.Equal(t, 1, n)
	_, n = w.Quantile(9*s, 0.5)
	assert.Equal(t, 0, n)
}

// TestUnevenSlices checks the width is span/slices rounded down: 1 s in 3 slices
// of 333.333333 ms.
func TestUnevenSlices(t *testing.T) {
	w := mustWindow(t, time.Second, 3)
	w.Add(0, ms)
	_, n := w.Quantile(999_999_998, 0.5)
	assert.Equal(t, 1, n)
	_, n = w.Quantile(999_999_999, 0.5) // 3 x 333333333 ns
	assert.Equal(t, 0, n)
}

// TestMemoStaleness walks the memo rule: a read is recomputed when q changes, a
// slice rotates, or more than samples/32 samples were added since.
func TestMemoStaleness(t *testing.T) {
	fast, slow := ms, 10*time.Second
	w := mustWindow(t, time.Minute, 60)
	for range 64 {
		w.Add(0, fast)
	}
	d, n := w.Quantile(0, 1)
	require.Equal(t, 64, n)
	require.Equal(t, bucketOf(fast), bucketOf(d))

	w.Add(0, slow)
	w.Add(0, slow) // 2 adds <= 66/32: the memo stands
	d, n = w.Quantile(0, 1)
	assert.Equal(t, 66, n, "the count is always exact")
	assert.Equal(t, bucketOf(fast), bucketOf(d), "memoized: the two slow samples are not seen yet")

	d, _ = w.Quantile(0, 0.999) // a different q recomputes
	assert.Equal(t, bucketOf(slow), bucketOf(d))
	d, _ = w.Quantile(0, 1)
	assert.Equal(t, bucketOf(slow), bucketOf(d))

	// A rotation recomputes, even with no sample expiring.
	w2 := mustWindow(t, time.Minute, 60)
	for range 64 {
		w2.Add(0, fast)
	}
	w2.Quantile(0, 1)
	w2.Add(0, slow)
	d, _ = w2.Quantile(0, 1)
	require.Equal(t, bucketOf(fast), bucketOf(d), "precondition: memoized")
	d, n = w2.Quantile(time.Second, 1)
	assert.Equal(t, 65, n)
	assert.Equal(t, bucketOf(slow), bucketOf(d), "recomputed after the rotation")

	// More than samples/32 adds recompute.
	w3 := mustWindow(t, time.Minute, 60)
	for range 64 {
		w3.Add(0, fast)
	}
	w3.Quantile(0, 1)
	for range 3 { // 3 > 67/32
		w3.Add(0, slow)
	}
	d, _ = w3.Quantile(0, 1)
	assert.Equal(t, bucketOf(slow), bucketOf(d))
}

// TestMemoExactForSmallWindows checks that under 32 samples every add is seen.
func TestMemoExactForSmallWindows(t *testing.T) {
	w := mustWindow(t, time.Minute, 10)
	for i := 1; i <= 31; i++ {
		w.Add(0, time.Duration(i)*ms)
		d, n := w.Quantile(0, 1)
		require.Equal(t, i, n)
		assert.Equal(t, bucketOf(time.Duration(i)*ms), bucketOf(d), "after %d samples", i)
	}
}

func TestWindowDropsBeyondCapacity(t *testing.T) {
	w := mustWindow(t, time.Second, 1)
	w.Add(0, ms)
	w.n = maxSamples // pretend it is full, rather than adding 4 billion samples
	w.Add(0, time.Second)
	assert.Equal(t, maxSamples, w.n)
	assert.Equal(t, uint32(0), w.total[bucketOf(time.Second)], "dropped, not counted")
	assert.Equal(t, uint32(1), w.ring[0].n)
}

func TestHeldIsTheHistoryTheWindowHolds(t *testing.T) {
	w, err := New(10*time.Second, 10)
	require.NoError(t, err)
	assert.Zero(t, w.Held(0), "no samples")
	w.Add(2500*time.Millisecond, time.Millisecond) // in the slice [2 s, 3 s)
	assert.Equal(t, time.Second, w.Held(3*time.Second), "from the start of its slice")
	assert.Equal(t, 8*time.Second, w.Held(10*time.Second))
	w.Add(10*time.Second, time.Millisecond)
	assert.Equal(t, 9*time.Second, w.Held(11*time.Second))
	assert.Equal(t, 9999*time.Millisecond, w.Held(11999*time.Millisecond), "the oldest slice is still in the window")
	assert.Equal(t, 2*time.Second, w.Held(12*time.Second), "the slice of 2 s has expired")
	assert.Zero(t, w.Held(time.Minute), "everything has expired")
	_, n := w.Quantile(11*time.Second, 0.5)
	assert.Equal(t, 2, n, "Held changed nothing")
}

func TestWindowSize(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("sizes are documented for 64-bit platforms")
	}
	assert.Equal(t, 344, int(unsafe.Sizeof(slice{})), "bytes per slice")
	w, err := New(30*time.Second, 10)
	require.NoError(t, err)
	assert.Equal(t, int(unsafe.Sizeof(Window{}))+10*344, w.Bytes())
}

// A window's owner keeps it under its own lock and reads it at its own
// clock's readings, as a circuit breaker keeps the median of its successful
// attempts over five minutes. Every attempt took 20 ms, and the median reads
// 20 ms: the forty samples share the bucket [19.95 ms, 23.73 ms), and the
// bucket's mean places them.
func TestWindowReadsASteadyLatencyAsItself(t *testing.T) {
	w, err := New(5*time.Minute, 10)
	require.NoError(t, err)
	for i := range 40 {
		now := time.Duration(i) * time.Second
		w.Add(now, 20*time.Millisecond)
		median, n := w.Quantile(now, 0.5)
		if i == 39 {
			assert.Equal(t, 20*time.Millisecond, median.Round(time.Millisecond))
			assert.Equal(t, 40, n)
		}
	}
}

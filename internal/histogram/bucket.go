package histogram

import (
	"math/bits"
	"time"
)

// The histogram has one underflow bucket, [0, 16.4 µs), and four buckets for
// every power of two from 2^14 ns (16.4 µs) to 2^35 ns (34.4 s), split
// geometrically at the fourth roots of two: the bucket boundaries are the
// integers ceil(2^(e + k/4)) ns for e in 14..34 and k in 0..3. Each bucket's top
// is about 2^(1/4) = 1.19 times its bottom, so its width is under 19% of its
// lower bound. Samples of 2^35 ns and above are counted in the top bucket,
// [ceil(2^34.75), 2^35). The range covers the latencies of remote calls, 100 µs
// to 10 s, with room on both sides; within a bucket, the window places
// samples by the bucket's mean (see Window.Quantile), so the underflow bucket
// still reads a steady 5 µs as 5 µs.
const (
	minExp      = 14 // 2^minExp ns is the lower bound of the first regular bucket
	maxExp      = 35 // 2^maxExp ns is the upper bound of the top bucket
	subBuckets  = 4  // buckets per power of two
	numBuckets  = 1 + (maxExp-minExp)*subBuckets
	topBucket   = numBuckets - 1
	rangeTop    = uint64(1) << maxExp // upper bound of the top bucket, in ns
	underflowUp = uint64(1) << minExp // upper bound of the underflow bucket, in ns
)

// Thresholds of the sub-buckets of a power of two, in 1.63 fixed point: root[k-1]
// is ceil(2^63 * 2^(k/4)), the smallest integer at or above the real boundary, so
// that comparing an integer mantissa against it decides the bucket exactly.
// Checked against math/big in the tests.
const (
	root1 = 0x9837f0518db8a970 // ceil(2^63.25)
	root2 = 0xb504f333f9de6485 // ceil(2^63.5)
	root3 = 0xd744fccad69d6af5 // ceil(2^63.75)
)

// lower holds the lower bound of every bucket, in ns; lower[numBuckets] is the
// upper bound of the top bucket. It is derived from the thresholds above, so
// bucketOf(lower[i]) == i and bucketOf(lower[i]-1) == i-1 for every i >= 1.
var lower = func() (b [numBuckets + 1]uint64) {
	roots := [subBuckets]uint64{1 << 63, root1, root2, root3}
	for e := minExp; e < maxExp; e++ {
		s := uint(63 - e)
		for k, r := range roots {
			// ceil(ceil(2^63 * 2^(k/4)) / 2^s) == ceil(2^(e + k/4)).
			b[1+(e-minExp)*subBuckets+k] = (r + 1<<s - 1) >> s
		}
	}
	b[numBuckets] = rangeTop
	return b
}()

// bucketOf returns the index of the bucket that counts a sample of d: 0 for d
// below 1024 ns (negative d included), topBucket for d of 2^36 ns and more. It
// uses integer arithmetic only, without a loop.
func bucketOf(d time.Duration) int {
	v := uint64(max(d, 0))
	if v < underflowUp {
		return 0
	}
	v = min(v, rangeTop-1)
	lz := bits.LeadingZeros64(v)
	m := v << lz // mantissa with its top bit set: v = m * 2^(e-63)
	e := 63 - lz
	// Sub64's borrow is 1 exactly when m is below the threshold.
	_, b1 := bits.Sub64(m, root1, 0)
	_, b2 := bits.Sub64(m, root2, 0)
	_, b3 := bits.Sub64(m, root3, 0)
	return 1 + (e-minExp)*subBuckets + subBuckets - 1 - int(b1+b2+b3)
}

// clampTo returns d moved into bucket i's range, as the bucket counts it.
func clampTo(i int, d time.Duration) float64 {
	return min(max(float64(d), float64(lower[i])), float64(lower[i+1]-1))
}

// place returns the value of the j-th (1-based) of the c samples counted in
// bucket i, whose sum is sum. The samples are taken to be spread evenly by
// rank over the widest interval centred on their mean that fits in the
// bucket, each in the middle of its part: mean + h*((2j-1)/c - 1), where h is
// the distance from the mean to the nearer edge. Samples that all had one
// value therefore read as that value at the middle rank, and samples spread
// over the bucket (mean near its middle) read as an even spread over it. The
// result always lies inside the bucket. 1 <= j <= c.
func place(i int, j, c uint64, sum float64) time.Duration {
	lo, hi := float64(lower[i]), float64(lower[i+1]-1)
	mean := min(max(sum/float64(c), lo), hi)
	h := min(mean-lo, hi-mean)
	v := mean + h*(float64(2*j-1)/float64(c)-1)
	return time.Duration(min(max(v, lo), hi))
}

package histogram

import (
	"math"
	"math/big"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// ceilRoot returns ceil(2^(p/4)) exactly, for p not a multiple of 4 (the root
// is then irrational, so the floor of the fourth root plus one is the ceiling).
func ceilRoot(p uint) uint64 {
	n := new(big.Int).Lsh(big.NewInt(1), p)
	n.Sqrt(n).Sqrt(n)
	return n.Add(n, big.NewInt(1)).Uint64()
}

func TestRootConstants(t *testing.T) {
	assert.Equal(t, ceilRoot(253), uint64(root1), "ceil(2^63.25)")
	assert.Equal(t, ceilRoot(254), uint64(root2), "ceil(2^63.5)")
	assert.Equal(t, ceilRoot(255), uint64(root3), "ceil(2^63.75)")
}

func TestBucketLayout(t *testing.T) {
	require.Equal(t, 85, numBuckets)
	assert.Equal(t, uint64(0), lower[0])
	assert.Equal(t, uint64(16384), lower[1])
	assert.Equal(t, uint64(1)<<35, lower[numBuckets])
	worst := 0.0
	for e := uint(minExp); e < maxExp; e++ {
		for k := uint(0); k < subBuckets; k++ {
			i := 1 + int(e-minExp)*subBuckets + int(k)
			want := uint64(1) << e
			if k > 0 {
				want = ceilRoot(4*e + k)
			}
			require.Equal(t, want, lower[i], "lower bound of bucket %d = ceil(2^(%d+%d/4))", i, e, k)
			assert.Less(t, lower[i], lower[i+1], "bucket %d is empty", i)
			worst = max(worst, float64(lower[i+1]-lower[i])/float64(lower[i]))
		}
	}
	// 2^(1/4) - 1 = 0.1892, plus the rounding of the boundaries to integers.
	assert.Less(t, worst, 0.19, "widest bucket relative to its lower bound")
	assert.Greater(t, worst, 0.189)
}

func TestBucketOfSteps(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want int
	}{
		{math.MinInt64, 0},
		{-1, 0},
		{0, 0},
		{1, 0},
		{16383, 0},
		{16384, 1},
		{19483, 1},
		{19484, 2},
		{23170, 2},
		{23171, 3},
		{27554, 3},
		{27555, 4},
		{32767, 4},
		{32768, 5},
		{time.Millisecond, 1 + (19-14)*4 + 3}, // 1e6 ns lies in [ceil(2^19.75), 2^20)
		{1 << 20, 1 + (20-14)*4},
		{536870912, 1 + (29-14)*4},
		{638450708, 1 + (29-14)*4},
		{638450709, 1 + (29-14)*4 + 1},
		{28892980822, 83},
		{28892980823, 84},
		{1<<35 - 1, 84},
		{1 << 35, 84}, // above the range: clamped into the top bucket
		{time.Hour, 84},
		{math.MaxInt64, 84},
	} {
		assert.Equal(t, tc.want, bucketOf(tc.d), "bucketOf(%d)", int64(tc.d))
	}
}

func TestBucketOfEdges(t *testing.T) {
	for i := 1; i < numBuckets; i++ {
		assert.Equal(t, i, bucketOf(time.Duration(lower[i])), "at the lower bound of bucket %d", i)
		assert.Equal(t, i-1, bucketOf(time.Duration(lower[i]-1)), "just below bucket %d", i)
	}
}

// TestBucketOfProperty checks bucketOf against the table of bounds for any
// duration: lower[i] <= d < lower[i+1], or the top bucket for d beyond the range.
func TestBucketOfProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		d := time.Duration(rapid.OneOf(
			rapid.Int64Range(-10, 1<<16),
			rapid.Int64Range(0, 1<<36),
			rapid.Int64(),
		).Draw(t, "d"))
		i := bucketOf(d)
		v := uint64(max(d, 0))
		if v >= 1<<35 {
			assert.Equal(t, topBucket, i)
			return
		}
		assert.LessOrEqual(t, lower[i], v)
		assert.Less(t, v, lower[i+1])
	})
}

func TestPlace(t *testing.T) {
	// Samples spread over the bucket (mean at its middle) split it evenly by
	// rank; samples of one value read as that value at the middle rank.
	mid := func(i int) float64 { return float64(lower[i]+lower[i+1]-1) / 2 }
	assert.Equal(t, time.Duration(8191), place(0, 1, 1, mid(0)))
	assert.Equal(t, time.Duration(2047), place(0, 1, 4, 4*mid(0)))
	assert.Equal(t, time.Duration(14335), place(0, 4, 4, 4*mid(0)))
	assert.Equal(t, 10*time.Microsecond, place(0, 1, 1, 10e3))
	assert.Equal(t, 10*time.Millisecond, place(bucketOf(10*time.Millisecond), 50, 99, 99*10e6))
	rapid.Check(t, func(t *rapid.T) {
		i := rapid.IntRange(0, topBucket).Draw(t, "i")
		c := rapid.Uint64Range(1, math.MaxUint32).Draw(t, "c")
		j := rapid.Uint64Range(1, c).Draw(t, "j")
		mean := rapid.Float64Range(float64(lower[i]), float64(lower[i+1]-1)).Draw(t, "mean")
		d := place(i, j, c, mean*float64(c))
		assert.Equal(t, i, bucketOf(d), "place(%d, %d, %d, mean %v) = %d", i, j, c, mean, d)
		if j < c {
			assert.LessOrEqual(t, d, place(i, j+1, c, mean*float64(c)), "not monotonic in rank")
		}
	})
}

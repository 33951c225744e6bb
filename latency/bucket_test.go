package latency

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
	require.Equal(t, 105, numBuckets)
	assert.Equal(t, uint64(0), lower[0])
	assert.Equal(t, uint64(1024), lower[1])
	assert.Equal(t, uint64(1)<<36, lower[numBuckets])
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
		{1023, 0},
		{1024, 1},
		{1217, 1},
		{1218, 2},
		{1448, 2},
		{1449, 3},
		{1722, 3},
		{1723, 4},
		{2047, 4},
		{2048, 5},
		{time.Millisecond, 1 + (19-10)*4 + 3}, // 1e6 ns lies in [ceil(2^19.75), 2^20)
		{1 << 20, 1 + (20-10)*4},
		{536870912, 1 + (29-10)*4},
		{638450708, 1 + (29-10)*4},
		{638450709, 1 + (29-10)*4 + 1},
		{57785961645, 103},
		{57785961646, 104},
		{1<<36 - 1, 104},
		{1 << 36, 104}, // above the range: clamped into the top bucket
		{time.Hour, 104},
		{math.MaxInt64, 104},
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
			rapid.Int64Range(-10, 1<<12),
			rapid.Int64Range(0, 1<<37),
			rapid.Int64(),
		).Draw(t, "d"))
		i := bucketOf(d)
		v := uint64(max(d, 0))
		if v >= 1<<36 {
			assert.Equal(t, topBucket, i)
			return
		}
		assert.LessOrEqual(t, lower[i], v)
		assert.Less(t, v, lower[i+1])
	})
}

func TestInterpolate(t *testing.T) {
	// One sample sits in the middle of its bucket; c samples split it evenly.
	assert.Equal(t, time.Duration(512), interpolate(0, 1, 1))
	assert.Equal(t, time.Duration(1024+194/2), interpolate(1, 1, 1))
	assert.Equal(t, time.Duration(128), interpolate(0, 1, 4))
	assert.Equal(t, time.Duration(896), interpolate(0, 4, 4))
	rapid.Check(t, func(t *rapid.T) {
		i := rapid.IntRange(0, topBucket).Draw(t, "i")
		c := rapid.Uint64Range(1, math.MaxUint32).Draw(t, "c")
		j := rapid.Uint64Range(1, c).Draw(t, "j")
		d := interpolate(i, j, c)
		assert.Equal(t, i, bucketOf(d), "interpolate(%d, %d, %d) = %d", i, j, c, d)
		if j < c {
			assert.LessOrEqual(t, d, interpolate(i, j+1, c), "not monotonic in rank")
		}
	})
}

package breaker

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestJitterBounds(t *testing.T) {
	d := 15 * time.Second
	for _, tc := range []struct {
		j      Jitter
		lo, hi time.Duration
	}{
		{JitterEqual, d / 2, d},
		{JitterFull, 0, d},
		{JitterNone, d, d},
	} {
		lo, hi := tc.j.bounds(d)
		assert.Equal(t, tc.lo, lo, tc.j.String())
		assert.Equal(t, tc.hi, hi, tc.j.String())
		r := rand.New(rand.NewPCG(3, 4))
		seenLo, seenHi := hi, lo
		for range 10000 {
			got := tc.j.apply(d, r)
			assert.GreaterOrEqual(t, got, lo)
			assert.LessOrEqual(t, got, hi)
			seenLo, seenHi = min(seenLo, got), max(seenHi, got)
		}
		// the draws cover the range: within 1% of each end
		assert.LessOrEqual(t, seenLo-lo, d/100, tc.j.String())
		assert.LessOrEqual(t, hi-seenHi, d/100, tc.j.String())
	}
}

func TestJitterOddAndTinyDurations(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, d := range []time.Duration{0, 1, 3, time.Duration(1<<63 - 1)} {
		for _, j := range []Jitter{JitterEqual, JitterFull, JitterNone} {
			lo, hi := j.bounds(d)
			got := j.apply(d, r)
			assert.GreaterOrEqual(t, got, lo)
			assert.LessOrEqual(t, got, hi)
			if j == JitterEqual {
				assert.GreaterOrEqual(t, lo, d/2)
			}
		}
	}
}

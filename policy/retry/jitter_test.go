package retry

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"pgregory.net/rapid"
)

func TestJitterBounds(t *testing.T) {
	const d = 800 * time.Millisecond
	tests := []struct {
		jitter    Jitter
		low, high time.Duration
	}{
		{FullJitter, 0, d},
		{EqualJitter, d / 2, d},
		{NoJitter, d, d},
	}
	for _, tt := range tests {
		t.Run(tt.jitter.String(), func(t *testing.T) {
			assert.Equal(t, tt.low, tt.jitter.Apply(d, lowest), "lowest draw")
			assert.Equal(t, tt.high, tt.jitter.Apply(d, highest), "highest draw")
			assert.Equal(t, time.Duration(0), tt.jitter.Apply(0, highest), "zero stays zero")
		})
	}
}

func TestJitterMidpoint(t *testing.T) {
	half := fixedSource(1 << 63)
	assert.Equal(t, 500*time.Millisecond, FullJitter.Apply(time.Second-1, half))
	assert.Equal(t, 750*time.Millisecond, EqualJitter.Apply(time.Second, half))
}

func TestJitterOddDurationStaysWithinHalf(t *testing.T) {
	// Equal jitter on 3 ns must never go below 1.5 ns, so its floor is 2 ns.
	assert.Equal(t, 2*time.Nanosecond, EqualJitter.Apply(3, lowest))
	assert.Equal(t, 3*time.Nanosecond, EqualJitter.Apply(3, highest))
}

func TestJitterString(t *testing.T) {
	assert.Equal(t, "retry.Jitter(7)", Jitter(7).String())
	assert.EqualError(t, Jitter(7).validate("Exponential.Jitter"),
		"retry: Exponential.Jitter must be FullJitter, EqualJitter or NoJitter, got retry.Jitter(7)")
}

func TestJitterProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		d := time.Duration(rapid.Int64Range(0, int64(time.Hour)).Draw(t, "d"))
		src := rand.NewPCG(rapid.Uint64().Draw(t, "seed"), 0)
		if got := FullJitter.Apply(d, src); got < 0 || got > d {
			t.Fatalf("full jitter of %v gave %v, outside [0, d]", d, got)
		}
		if got := EqualJitter.Apply(d, src); 2*got < d || got > d {
			t.Fatalf("equal jitter of %v gave %v, outside [d/2, d]", d, got)
		}
		if got := NoJitter.Apply(d, src); got != d {
			t.Fatalf("no jitter of %v gave %v", d, got)
		}
	})
}

// TestFullJitterIsSpread checks that the draws really cover the range: with a
// fixed seed, a thousand draws land in each tenth of it.
func TestFullJitterIsSpread(t *testing.T) {
	src := rand.NewPCG(1, 2)
	var deciles [10]int
	for range 1000 {
		deciles[FullJitter.Apply(time.Second-1, src)/(100*time.Millisecond)]++
	}
	for i, n := range deciles {
		assert.Greater(t, n, 50, "decile %d", i)
	}
}

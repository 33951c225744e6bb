package retry

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"time"
)

// Jitter says how a backoff spreads a nominal delay d at random, so that callers
// that failed together do not retry together. The zero value is [FullJitter].
type Jitter uint8

const (
	// FullJitter draws the delay uniformly from [0, d]. It spreads retries the
	// most and is the default.
	FullJitter Jitter = iota
	// EqualJitter draws the delay uniformly from [d/2, d]: it keeps at least half
	// of the nominal delay.
	EqualJitter
	// NoJitter uses d as it is. It is meant for tests and for a single caller.
	NoJitter
)

// String returns the jitter's name.
func (j Jitter) String() string {
	switch j {
	case FullJitter:
		return "full"
	case EqualJitter:
		return "equal"
	case NoJitter:
		return "none"
	}
	return fmt.Sprintf("retry.Jitter(%d)", uint8(j))
}

// validate refuses a Jitter outside the defined ones; field names the setting.
func (j Jitter) validate(field string) error {
	if j > NoJitter {
		return fmt.Errorf("retry: %s must be FullJitter, EqualJitter or NoJitter, got %v", field, j)
	}
	return nil
}

// Apply returns d jittered with randomness from src. A d of 0 or less is returned
// as is. Apply is a pure function of its arguments and src's output.
func (j Jitter) Apply(d time.Duration, src rand.Source) time.Duration {
	if d <= 0 {
		return d
	}
	switch j {
	case FullJitter:
		return uniform(src, d)
	case EqualJitter:
		half := d / 2
		return d - half + uniform(src, half)
	}
	return d
}

// uniform returns a duration drawn from [0, n], n >= 0, with one value from src.
// It scales the 64 random bits by n+1 and keeps the high word, which is uniform
// to within (n+1)/2^64, far below a nanosecond's worth for any real delay.
func uniform(src rand.Source, n time.Duration) time.Duration {
	hi, _ := bits.Mul64(src.Uint64(), uint64(n)+1)
	return time.Duration(hi)
}

// globalSource is the default random source: math/rand/v2's top-level generator,
// which is safe for concurrent use and allocates nothing.
type globalSource struct{}

// Uint64 returns a random value from math/rand/v2's top-level generator.
func (globalSource) Uint64() uint64 { return rand.Uint64() }

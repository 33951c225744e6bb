package breaker

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// Jitter is how a breaker randomises each break so that a fleet of processes that
// opened together does not probe together. The zero value is JitterEqual, the
// default.
type Jitter uint8

const (
	// JitterEqual serves a break drawn uniformly from [d/2, d], where d is the
	// nominal (grown and capped) break. It keeps a floor under the break, which is
	// why it is the default.
	JitterEqual Jitter = iota
	// JitterFull serves a break drawn uniformly from [0, d]. It spreads probes
	// most widely but may probe almost at once.
	JitterFull
	// JitterNone serves exactly d. Use it in tests that expect HalfOpen after
	// exactly Config.BreakDuration.
	JitterNone
)

// String returns "equal", "full" or "none".
func (j Jitter) String() string {
	switch j {
	case JitterEqual:
		return "equal"
	case JitterFull:
		return "full"
	case JitterNone:
		return "none"
	}
	return fmt.Sprintf("breaker.Jitter(%d)", uint8(j))
}

// bounds returns the shortest and longest break j can serve for the nominal break
// d. The longest is always d: jitter never lengthens a break.
func (j Jitter) bounds(d time.Duration) (lo, hi time.Duration) {
	switch j {
	case JitterFull:
		return 0, d
	case JitterNone:
		return d, d
	}
	return d - d/2, d
}

// apply draws the break actually served for the nominal break d. It is called with
// the breaker's lock held, which is what makes a non-concurrent source safe.
func (j Jitter) apply(d time.Duration, r *rand.Rand) time.Duration {
	lo, hi := j.bounds(d)
	if hi <= lo {
		return hi
	}
	span := int64(hi - lo)
	if span == int64(^uint64(0)>>1) { // [lo, hi] would overflow Int64N's bound
		return lo + time.Duration(r.Int64())
	}
	return lo + time.Duration(r.Int64N(span+1))
}

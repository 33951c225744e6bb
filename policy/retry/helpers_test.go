package retry

import (
	"math"
	"math/rand/v2"
	"sync"
)

// fixedSource always returns the same value: 0 draws the low end of every jitter
// range, math.MaxUint64 the high end.
type fixedSource uint64

func (s fixedSource) Uint64() uint64 { return uint64(s) }

var (
	lowest  rand.Source = fixedSource(0)
	highest rand.Source = fixedSource(math.MaxUint64)
)

// lockedSource makes a seeded generator safe for concurrent use, for
// reproducible runs with many callers.
type lockedSource struct {
	mu  sync.Mutex
	src *rand.PCG
}

func newLockedSource(seed uint64) *lockedSource {
	return &lockedSource{src: rand.NewPCG(seed, seed)}
}

func (s *lockedSource) Uint64() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.src.Uint64()
}

package criticality_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/resilience-go/pipeline/criticality"
)

func TestTheDefaultSharesKeepTheTopOfALimit(t *testing.T) {
	var s criticality.Shares
	require.NoError(t, s.Validate())
	assert.Equal(t, 10, s.Cap(criticality.Critical, 10))
	assert.Equal(t, 10, s.Cap(criticality.Default, 10), "an unmarked call fills a limit as it did before levels")
	assert.Equal(t, 8, s.Cap(criticality.Sheddable, 10), "75% of 10, rounded up")
	assert.Equal(t, 1, s.Cap(criticality.Sheddable, 1), "every level may take an empty limit")
	assert.Equal(t, 0, s.Cap(criticality.Critical, 0))
	assert.Equal(t, 7, criticality.Shares{Default: 0.7, Sheddable: 0.7}.Cap(criticality.Default, 10), "70% of 10 is 7, not 8")
	assert.False(t, s.Admits(criticality.Critical, math.NaN(), 10))
}

func TestImpossibleSharesAreRefusedByName(t *testing.T) {
	for cfg, field := range map[criticality.Shares]string{
		{Default: 1.5}:                 "Shares.Default",
		{Default: -0.1}:                "Shares.Default",
		{Sheddable: math.Inf(1)}:       "Shares.Sheddable",
		{Default: 0.5, Sheddable: 0.6}: "more than Shares.Default",
	} {
		err := cfg.Validate()
		require.Error(t, err, "%+v", cfg)
		assert.Contains(t, err.Error(), field)
	}
	assert.NoError(t, criticality.Shares{Default: 1, Sheddable: 1}.Validate())
}

// At one instant (the same units taken of the same limit), a higher level
// is admitted whenever a lower one is, and Cap agrees with Admits.
func TestAHigherLevelIsAdmittedWheneverALowerOneIs(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		d := rapid.Float64Range(1e-9, 1).Draw(t, "default")
		s := criticality.Shares{Default: d, Sheddable: rapid.Float64Range(1e-9, d).Draw(t, "sheddable")}
		limit := rapid.IntRange(0, 10000).Draw(t, "limit")
		used := rapid.IntRange(0, limit+2).Draw(t, "used")
		var prev bool
		for l := criticality.Sheddable; l <= criticality.Critical; l++ {
			ok := s.Admits(l, float64(used), float64(limit))
			if prev && !ok {
				t.Fatalf("%v refused at %d of %d while a lower level is admitted", l, used, limit)
			}
			prev = ok
			if ok != (used < s.Cap(l, limit)) && limit > 0 {
				t.Fatalf("%v: Admits %v at %d of %d, Cap %d", l, ok, used, limit, s.Cap(l, limit))
			}
		}
	})
}

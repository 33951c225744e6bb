package criticality_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline/criticality"
)

func TestAGuaranteeIsItsFractionOfALimitRoundedDown(t *testing.T) {
	g := criticality.Guarantees{Default: 0.7, Sheddable: 0.1}
	assert.Equal(t, 7, g.Of(criticality.Default, 10), "70% of 10 is 7, not 6")
	assert.Equal(t, 3, g.Of(criticality.Sheddable, 32))
	assert.Equal(t, 0, g.Of(criticality.Sheddable, 9), "a guarantee is never rounded up")
	assert.Equal(t, 7, g.Of(0, 10), "an unmarked call is Default")
	assert.Equal(t, 0, g.Of(criticality.Critical, 10), "Critical needs none")
	assert.Equal(t, 0, g.Of(criticality.Default, 0))
}

func TestImpossibleGuaranteesAreRefusedNamingTheField(t *testing.T) {
	for _, tc := range []struct {
		g     criticality.Guarantees
		s     criticality.Shares
		field string
	}{
		{criticality.Guarantees{Default: -0.1}, criticality.Shares{}, "Guarantees.Default"},
		{criticality.Guarantees{Default: 1}, criticality.Shares{}, "Guarantees.Default"},
		{criticality.Guarantees{Sheddable: math.NaN()}, criticality.Shares{}, "Guarantees.Sheddable"},
		{criticality.Guarantees{Default: 0.5, Sheddable: 0.5}, criticality.Shares{}, "add up to the whole limit"},
		{criticality.Guarantees{Sheddable: 0.76}, criticality.Shares{}, "sheddable calls, 0.76, is above their share 0.75"},
		{criticality.Guarantees{Default: 0.6}, criticality.Shares{Default: 0.5}, "default calls, 0.6, is above their share 0.5"},
	} {
		err := tc.g.Validate(tc.s)
		require.Error(t, err, "%+v", tc.g)
		assert.Contains(t, err.Error(), tc.field)
	}
	assert.NoError(t, criticality.Guarantees{}.Validate(criticality.Shares{}))
	assert.NoError(t, criticality.Guarantees{Default: 0.5, Sheddable: 0.49}.Validate(criticality.Shares{}))
}

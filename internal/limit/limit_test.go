package limit

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/policy/adaptive"
	"github.com/resilience-go/pipeline/policy/bulkhead"
	"github.com/resilience-go/pipeline/policy/ratelimit"
)

func TestEveryLimitIsTheStageItsGuardMakes(t *testing.T) {
	rl, err := ratelimit.New(ratelimit.Config{Rate: 10})
	require.NoError(t, err)
	bh, err := bulkhead.New(bulkhead.Config{MaxConcurrent: 1})
	require.NoError(t, err)
	al, err := adaptive.New(adaptive.Config{})
	require.NoError(t, err)
	for _, c := range []struct {
		l    pipeline.Described
		kind string
	}{{rl, "ratelimit"}, {bh, "bulkhead"}, {al, "adaptive"}} {
		p, ok := Stage[int](c.l)
		require.True(t, ok, "%T", c.l)
		assert.Equal(t, c.kind, p.(pipeline.Described).Stage().Kind)
	}
	_, ok := Stage[int](pipeline.StageInfo{})
	assert.False(t, ok, "not a limit")
}

package bulkhead_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline/policy/bulkhead"
)

func mustNew(t testing.TB, cfg bulkhead.Config) *bulkhead.Bulkhead {
	t.Helper()
	b, err := bulkhead.New(cfg)
	require.NoError(t, err)
	return b
}

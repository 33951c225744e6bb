package breaker_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/pipelinetest"
	"github.com/resilience-go/pipeline/policy/breaker"
)

func TestConformance(t *testing.T) {
	pipelinetest.Run(t, func() pipeline.Policy[string] {
		b, err := breaker.New(breaker.Config{})
		require.NoError(t, err)
		return breaker.Guard[string](b)
	}, "value")
}

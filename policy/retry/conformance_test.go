package retry

import (
	"testing"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/budget"
	"github.com/resilience-go/pipeline/pipelinetest"
)

func TestConformance(t *testing.T) {
	pipelinetest.Run(t, func() pipeline.Policy[string] {
		b, err := budget.New(budget.Config{})
		if err != nil {
			t.Fatal(err)
		}
		return mustNew[string](t, Config{Budget: b})
	}, "value")
}

package hedge_test

import (
	"testing"
	"time"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/pipelinetest"
	"github.com/resilience-go/pipeline/policy/hedge"
)

// The suite's work returns at once, so the stage is armed and its hedge never
// fires: the checks hold the armed path to the rules.
func TestConformance(t *testing.T) {
	pipelinetest.Run(t, func() pipeline.Policy[string] {
		return stage(t, hedge.Config{})
	}, "value")
}

// The same checks with a hedge due 1 ns after the first copy starts, so it is
// sent whenever the work waits (the checks for cancellation and for concurrent
// use).
func TestConformanceWhenHedging(t *testing.T) {
	pipelinetest.Run(t, func() pipeline.Policy[string] {
		return stage(t, hedge.Config{MinDelay: time.Nanosecond, Quantile: 0.01, Estimator: warm(t, 20, 0)})
	}, "value")
}

package breakertest_test

import (
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/resilience-go/pipeline/policy/breaker"
	"github.com/resilience-go/pipeline/policy/breaker/breakertest"
)

func TestStateMachineDefaults(t *testing.T) {
	rapid.Check(t, breakertest.StateMachine(breaker.Config{}))
}

func TestStateMachineRandomConfigs(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		breakertest.StateMachine(breakertest.Configs().Draw(t, "config"))(t)
	})
}

func TestGeneratedConfigsAreValid(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		if err := breakertest.Configs().Draw(t, "config").Validate(); err != nil {
			t.Fatal(err)
		}
	})
}

// TestStateMachineMeasuredNormals leans on the measured normals: no absolute
// ratio and a long failure run, so that the relative trip and the measured
// slow-call threshold decide most trips.
func TestStateMachineMeasuredNormals(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := breakertest.Configs().Draw(t, "config")
		c.ConsecutiveFailures = 50
		c.FailureRatio = 0
		c.SlowCallThreshold = 0
		c.SlowCalls.Disabled = false
		c.Failures = breaker.Failures{
			Multiple:       rapid.SampledFrom([]float64{1.5, 2, 5}).Draw(t, "Failures.Multiple"),
			Floor:          rapid.SampledFrom([]float64{0.01, 0.1, 0.3}).Draw(t, "Failures.Floor"),
			MinimumSamples: rapid.IntRange(1, 30).Draw(t, "Failures.MinimumSamples"),
		}
		breakertest.StateMachine(c)(t)
	})
}

// TestStateMachineRecovery always has a ramp, and often a slow-call threshold
// that the generated durations cross both ways, so that ramps start on slow
// probes, stall, climb back, run out and fail.
func TestStateMachineRecovery(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := breakertest.Configs().Draw(t, "config")
		c.Recovery = breakertest.Recoveries().Draw(t, "Recovery")
		if rapid.Bool().Draw(t, "constant threshold") {
			c.SlowCallThreshold = rapid.SampledFrom([]time.Duration{time.Millisecond, 100 * time.Millisecond}).Draw(t, "SlowCallThreshold")
		}
		breakertest.StateMachine(c)(t)
	})
}

func TestStateMachineDefaultRecovery(t *testing.T) {
	rapid.Check(t, breakertest.StateMachine(breaker.Config{Recovery: &breaker.Recovery{}}))
}

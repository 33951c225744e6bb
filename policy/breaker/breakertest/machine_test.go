package breakertest_test

import (
	"testing"

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

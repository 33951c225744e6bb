package bench

import (
	"fmt"
	"sync"
	"time"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/budget"
	"github.com/resilience-go/pipeline/latency"
	"github.com/resilience-go/pipeline/policy/breaker"
	"github.com/resilience-go/pipeline/policy/hedge"
	"github.com/resilience-go/pipeline/policy/retry"
	"github.com/resilience-go/pipeline/policy/timeout"
	"github.com/resilience-go/pipeline/standard"
)

// OursPreset is the standard preset with every default, named as a user
// would name it: timeout -> retry -> breaker -> hedge -> attempt timeout. The
// calls are not marked repeatable, so the hedge only measures them.
func OursPreset() *pipeline.Pipeline[int] {
	return must(standard.New[int](standard.Config{Name: "bench"})).Pipeline
}

// PresetTimeout and PresetAttemptTimeout are the preset's two timeouts, as
// standard.New sets them, for the pipelines built to match it.
var PresetTimeout, PresetAttemptTimeout = standard.Config{}.Timeouts()

// HandBuiltPreset is the same pipeline built stage by stage, as
// docs/standard.md describes it.
func HandBuiltPreset() *pipeline.Pipeline[int] {
	funds := must(budget.New(budget.Config{Name: "bench"}))
	brk := must(breaker.New(breaker.Config{Name: "bench", Recovery: &breaker.Recovery{}}))
	est := must(latency.New(latency.Config{Name: "bench"}))
	return pipeline.New(
		must(timeout.New[int](timeout.Config{Name: "bench", Timeout: PresetTimeout})),
		must(retry.New[int](retry.Config{Name: "bench", Budget: funds})),
		breaker.Guard[int](brk),
		must(hedge.New[int](hedge.Config{Name: "bench", Breaker: brk, Budget: funds, Estimator: est})),
		must(timeout.New[int](timeout.Config{Name: "bench", Timeout: PresetAttemptTimeout})),
	).With(pipeline.Options[int]{Name: "bench"})
}

// ScopeKeys is how many keys the scope benchmarks hold, and KeyOf the key of
// number i: host names, as an HTTP client's scopes are keyed.
const ScopeKeys = 256

func KeyOf(i int) string { return fmt.Sprintf("host-%d.example.com:443", i%ScopeKeys) }

// OursScopes is a standard.Scopes holding ScopeKeys keys, each already in the
// lock-free copy.
func OursScopes() *standard.Scopes[string, int] {
	s := must(standard.NewScopes(standard.ScopesConfig[string, int]{IdleAfter: time.Hour}))
	for range 2 {
		for i := range ScopeKeys {
			must(s.Get(KeyOf(i)))
		}
	}
	return s
}

// SyncMapScopes is a sync.Map holding the same keys, each with a pipeline:
// the hand-rolled registry.
func SyncMapScopes() *sync.Map {
	var m sync.Map
	for i := range ScopeKeys {
		m.Store(KeyOf(i), must(standard.New[int](standard.Config{})))
	}
	return &m
}

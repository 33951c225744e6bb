package fallback

import "github.com/resilience-go/pipeline/outcome"

// Executed reports that the stage called its Func for a result When chose:
// Verdict and Err are that result's (Err never nil for a failure), FuncErr is
// Func's error, nil when the result was replaced.
type Executed struct {
	Verdict outcome.Verdict
	Err     error
	FuncErr error
}

// Name returns "fallback.executed".
func (Executed) Name() string { return "fallback.executed" }

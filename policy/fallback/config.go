package fallback

import (
	"context"
	"errors"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/outcome"
)

// Config configures a fallback stage for results of type T. Func is required;
// the zero value of every other field means its default.
type Config[T any] struct {
	// Name names the stage, typically after the dependency it stands in for;
	// its events carry it (pipeline.Source.Name). Empty means unnamed.
	Name string
	// When chooses the results the stage replaces. It is called once per call
	// with the result of the stages inside, successes included (so that a
	// value can be judged), and must be safe for concurrent use. Nil means
	// [Failed]: every failure except the caller's own cancellation.
	When func(r pipeline.Result[T]) bool
	// Func returns the replacement for r, a result When chose, with the call's
	// context. r.Err is never nil for a failure: a value judged a failure
	// comes with a *pipeline.ValueError. r.Value is released once Func has
	// returned: read from it, never return it. An error from Func means the
	// fallback failed too (see the package documentation). It must be safe for
	// concurrent use. It has no default: it must be set.
	Func func(ctx context.Context, r pipeline.Result[T]) (T, error)
}

// Validate reports the first setting of c that cannot work, naming the field,
// or nil.
func (c Config[T]) Validate() error {
	if c.Func == nil {
		return errors.New("fallback: Config.Func must be set: it computes the replacement, and has no default")
	}
	return nil
}

// Failed reports whether r is a failure that the caller did not cause by
// canceling: an error, or a value judged a failure, whose verdict is not the
// caller's cancellation. A refusal by one of our own stages (an open breaker,
// an exhausted budget) is such a failure. It is the default [Config].When.
func Failed[T any](r pipeline.Result[T]) bool {
	return (r.Err != nil || r.Verdict.Kind != outcome.OK) && !r.Verdict.Canceled
}

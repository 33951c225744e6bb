package pipeline_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/outcome"
)

// A stage is a function of the context and the rest of the pipeline. This one
// runs the rest twice at most, the way a retry would, and reads the verdict the
// pipeline gave each attempt.
func Example_customStage() {
	again := pipeline.PolicyFunc[string](func(ctx context.Context, next pipeline.Next[string]) pipeline.Result[string] {
		r := next.Run(ctx)
		if r.Verdict.Retryable() {
			fmt.Println("attempt 1 was", r.Verdict)
			r = next.WithAttempt(2).Run(ctx)
		}
		return r
	})

	calls := 0
	greeting, err := pipeline.Execute(context.Background(), func(ctx context.Context) (string, error) {
		calls++
		if calls == 1 {
			return "", errors.New("connection reset")
		}
		return "hello", nil
	}, again)
	fmt.Println(greeting, err)
	// Output:
	// attempt 1 was transient
	// hello <nil>
}

// A classifier can judge returned values as well as errors: here a status code
// of 503 is a transient failure even though the work returned no error.
func ExampleOptions_classifier() {
	type response struct{ status int }
	p := pipeline.New[response]().With(pipeline.Options[response]{
		Classifier: func(r response, err error) (outcome.Verdict, bool) {
			if err != nil {
				return outcome.Verdict{}, false // let the built-in rules decide
			}
			return outcome.HTTPStatus(r.status, "", time.Time{}), true
		},
		OnEvent: func(_ context.Context, _ pipeline.Source, e pipeline.Event) {
			if a, ok := e.(pipeline.AttemptFinished); ok {
				fmt.Println("attempt", a.Attempt, "was", a.Verdict)
			}
		},
	})
	r, err := p.Execute(context.Background(), func(context.Context) (response, error) {
		return response{status: 503}, nil
	})
	fmt.Println(r.status, err)
	// Output:
	// attempt 1 was transient
	// 503 <nil>
}

// Every stage that refuses or gives up returns a *StopError.
func ExampleStopError() {
	// Refuse gives the stop the verdict of a refusal of our own, so that no
	// breaker outside counts it and no retry pays for it.
	refuse := pipeline.PolicyFunc[int](func(ctx context.Context, next pipeline.Next[int]) pipeline.Result[int] {
		return next.Refuse(ctx, &pipeline.StopError{Stage: "gate", Reason: pipeline.DependencyUnavailable})
	})
	_, err := pipeline.Execute(context.Background(), func(context.Context) (int, error) { return 1, nil }, refuse)
	if stop, ok := errors.AsType[*pipeline.StopError](err); ok {
		fmt.Println(stop.Stage, "stopped the call:", stop.Reason)
	}
	fmt.Println(errors.Is(err, pipeline.DependencyUnavailable))
	// Output:
	// gate stopped the call: dependency unavailable
	// true
}

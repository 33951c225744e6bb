package timeout_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/timeout"
)

// A timeout stage cuts the work short and says the deadline was its own. (The
// timeout is a nanosecond so that the example does not wait.)
func Example() {
	stage, err := timeout.New[string](timeout.Config{Timeout: time.Nanosecond})
	if err != nil {
		panic(err)
	}
	_, err = pipeline.Execute(context.Background(), func(ctx context.Context) (string, error) {
		<-ctx.Done() // the work honours its context
		return "", ctx.Err()
	}, stage)
	fmt.Println(errors.Is(err, context.DeadlineExceeded), errors.Is(err, outcome.ErrTimeout))
	fmt.Println(err)
	// Output:
	// true true
	// pipeline: timeout: deadline exceeded (timeout after 1ns): context deadline exceeded
}

// Impossible settings are refused, naming the field.
func ExampleNew_invalid() {
	_, err := timeout.New[string](timeout.Config{Timeout: 0})
	fmt.Println(err)
	// Output: timeout: Config.Timeout must be positive, got 0s
}

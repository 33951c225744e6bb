package standard_test

import (
	"context"
	"fmt"

	"github.com/resilience-go/pipeline/policy/retry"
	"github.com/resilience-go/pipeline/standard"
)

// The recommended pipeline for one dependency, with one setting overridden.
func Example() {
	p, err := standard.New[string](standard.Config{Retry: retry.Config{MaxAttempts: 2}})
	if err != nil {
		panic(err)
	}
	v, err := p.Execute(context.Background(), func(ctx context.Context) (string, error) {
		return "hello", nil
	})
	fmt.Println(v, err, p.Breaker.State())
	// Output: hello <nil> closed
}

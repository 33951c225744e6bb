package pipeline_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/budget"
	"github.com/resilience-go/pipeline/policy/breaker"
	"github.com/resilience-go/pipeline/policy/hedge"
	"github.com/resilience-go/pipeline/policy/retry"
	"github.com/resilience-go/pipeline/policy/timeout"
)

// The recommended order: a deadline for the whole call, retries paid for by a
// budget, a breaker that samples every attempt, and a hedge for slow attempts. (So that the example waits
// no real time and prints the same hint every run, its backoff and refusal pause
// are a nanosecond, and its breaker has a fake clock and no break jitter.)
func Example_card() {
	brk, err := breaker.New(breaker.Config{
		ConsecutiveFailures: 2,
		BreakJitter:         breaker.JitterNone,
		Clock:               clockwork.NewFakeClock(),
	})
	if err != nil {
		panic(err)
	}
	retries, err := budget.New(budget.Config{})
	if err != nil {
		panic(err)
	}
	deadline, err := timeout.New[string](timeout.Config{Timeout: 5 * time.Second})
	if err != nil {
		panic(err)
	}
	retry, err := retry.New[string](retry.Config{
		Budget:       retries,
		Backoff:      retry.Constant{Interval: time.Nanosecond, Jitter: retry.NoJitter},
		RefusalPause: time.Nanosecond,
	})
	if err != nil {
		panic(err)
	}
	// Hedging needs 20 measured successes first, so this call is never hedged.
	hedges, err := hedge.New[string](hedge.Config{Breaker: brk, Budget: retries, Repeatable: true})
	if err != nil {
		panic(err)
	}
	p := pipeline.New(deadline, retry, breaker.Guard[string](brk), hedges)

	calls := 0
	_, err = p.Execute(context.Background(), func(ctx context.Context) (string, error) {
		calls++
		return "", errors.New("connection reset by peer")
	})
	fmt.Println("the dependency was called", calls, "times")
	fmt.Println(err)
	fmt.Println(errors.Is(err, pipeline.DependencyUnavailable), brk.State())
	// Output:
	// the dependency was called 2 times
	// pipeline: breaker: dependency unavailable (retry after 15s) after 2 attempts; last attempt: connection reset by peer
	// true open
}

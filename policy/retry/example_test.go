package retry_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/budget"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/retry"
)

// virtualTime returns a fake clock that fires every timer as soon as someone
// waits on it, so the examples run instantly; stop ends the helper goroutine.
func virtualTime() (clock *clockwork.FakeClock, stop func()) {
	clock = clockwork.NewFakeClock()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for clock.BlockUntilContext(ctx, 1) == nil {
			clock.Advance(time.Hour)
		}
	}()
	return clock, func() { cancel(); <-done }
}

// A retry stage funded by a budget shared by everything that calls one
// dependency. The work fails twice, then succeeds.
func Example() {
	clock, stop := virtualTime()
	defer stop()

	// One budget per dependency. Its clock stands still here, so the output
	// does not depend on how fast the example runs.
	shared, err := budget.New(budget.Config{Clock: clockwork.NewFakeClock()})
	if err != nil {
		panic(err)
	}
	r, err := retry.New[string](retry.Config{
		Budget:  shared,
		Backoff: retry.Exponential{Jitter: retry.NoJitter}, // predictable output
	})
	if err != nil {
		panic(err)
	}
	p := pipeline.New[string](r).With(pipeline.Options[string]{
		Clock: clock,
		OnEvent: func(_ context.Context, _ pipeline.Source, e pipeline.Event) {
			if s, ok := e.(retry.Scheduled); ok {
				fmt.Printf("attempt %d in %v after %v\n", s.Attempt, s.Delay, s.Verdict)
			}
		},
	})

	calls := 0
	v, err := p.Execute(context.Background(), func(context.Context) (string, error) {
		calls++
		if calls < 3 {
			return "", errors.New("connection reset")
		}
		return "hello", nil
	})
	fmt.Println(v, err)
	fmt.Printf("budget: %.1f of %v tokens\n", shared.Tokens(), shared.Capacity())
	// Output:
	// attempt 2 in 100ms after transient
	// attempt 3 in 200ms after transient
	// hello <nil>
	// budget: 28.1 of 30 tokens
}

// The default backoff doubles from 100 ms after a transient failure and from 1 s
// after a throttled one, up to 30 s; jitter then spreads each delay.
func ExampleExponential() {
	var e retry.Exponential // the zero value is the default
	for attempt := 2; attempt <= 7; attempt++ {
		fmt.Printf("attempt %d: %v transient, %v throttled\n", attempt,
			e.Nominal(attempt, outcome.Transient), e.Nominal(attempt, outcome.Throttled))
	}
	// A server's hint is used as given, capped at the maximum, without jitter.
	hinted := outcome.Verdict{Kind: outcome.Throttled}.WithRetryAfter(2 * time.Minute)
	fmt.Println("hint of 2m:", e.Delay(2, hinted, rand.NewPCG(1, 2)))
	// Output:
	// attempt 2: 100ms transient, 1s throttled
	// attempt 3: 200ms transient, 2s throttled
	// attempt 4: 400ms transient, 4s throttled
	// attempt 5: 800ms transient, 8s throttled
	// attempt 6: 1.6s transient, 16s throttled
	// attempt 7: 3.2s transient, 30s throttled
	// hint of 2m: 30s
}

// When the budget is empty, the call stops with the budget's reason and the time
// until it holds a token; the last attempt's error is still there.
func Example_budgetExhausted() {
	clock, stop := virtualTime()
	defer stop()

	// A budget with room for one retry, on a clock that stands still.
	small, err := budget.New(budget.Config{Capacity: 1, Clock: clockwork.NewFakeClock()})
	if err != nil {
		panic(err)
	}
	r, err := retry.New[int](retry.Config{MaxAttempts: 5, Budget: small})
	if err != nil {
		panic(err)
	}
	p := pipeline.New[int](r).With(pipeline.Options[int]{Clock: clock})

	errDown := errors.New("service down")
	_, err = p.Execute(context.Background(), func(context.Context) (int, error) { return 0, errDown })

	stopErr, _ := errors.AsType[*pipeline.StopError](err)
	fmt.Println(stopErr.Reason, "after", stopErr.Attempts, "attempts")
	fmt.Println("retry after", stopErr.RetryAfter.Round(time.Millisecond))
	fmt.Println(errors.Is(err, pipeline.BudgetExhausted), errors.Is(err, errDown))
	// Output:
	// retry budget exhausted after 2 attempts
	// retry after 333ms
	// true true
}

// A permanent failure is never retried, and the value of the last attempt stays
// reachable: here an HTTP-like status the classifier reads.
func Example_permanent() {
	r, err := retry.New[int](retry.Config{})
	if err != nil {
		panic(err)
	}
	p := pipeline.New[int](r).With(pipeline.Options[int]{
		Classifier: func(status int, err error) (outcome.Verdict, bool) {
			return outcome.HTTPStatus(status, "", time.Time{}), err == nil
		},
		// The stop error says what was judged: the status.
		Describe: func(status int) string { return fmt.Sprintf("status %d", status) },
	})
	calls := 0
	status, err := p.Execute(context.Background(), func(context.Context) (int, error) {
		calls++
		return 404, nil
	})
	fmt.Println(status, calls, err)
	// Output: 404 1 pipeline: retry: permanent failure after 1 attempt; last attempt: attempt returned status 404, judged permanent
}

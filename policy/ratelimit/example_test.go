package ratelimit_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/policy/ratelimit"
)

// A limiter of 2 calls a second, 2 deep, admits two calls at once and refuses
// the third with the time until its token. (A fake clock keeps the example
// from waiting.)
func Example() {
	clock := clockwork.NewFakeClock()
	l, err := ratelimit.New(ratelimit.Config{Name: "partner", Rate: 2, Burst: 2, Clock: clock})
	if err != nil {
		panic(err)
	}
	p := pipeline.New(ratelimit.Guard[string](l))
	call := func() {
		v, err := p.Execute(context.Background(), func(context.Context) (string, error) { return "ok", nil })
		if stop, isStop := errors.AsType[*pipeline.StopError](err); isStop {
			fmt.Printf("refused by %s, retry after %v\n", stop.Stage, stop.RetryAfter)
			return
		}
		fmt.Println(v)
	}
	call()
	call()
	call()
	clock.Advance(500 * time.Millisecond)
	call()
	// Output:
	// ok
	// ok
	// refused by ratelimit, retry after 500ms
	// ok
}

// Allow serves code outside a pipeline.
func ExampleLimiter_Allow() {
	clock := clockwork.NewFakeClock()
	l, err := ratelimit.New(ratelimit.Config{Rate: 10, Burst: 1, Clock: clock})
	if err != nil {
		panic(err)
	}
	fmt.Println(l.Allow())
	fmt.Println(l.Allow())
	// Output:
	// 0s true
	// 100ms false
}

// Impossible settings are refused, naming the field.
func ExampleNew_invalid() {
	_, err := ratelimit.New(ratelimit.Config{Rate: 0})
	fmt.Println(err)
	// Output: ratelimit: Config.Rate must be positive and at most 1e+09 calls a second, got 0
}

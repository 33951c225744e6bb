package breaker_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/breaker"
)

// A breaker guarding a dependency that fails, then recovers. The fake clock
// stands in for time passing; in production leave Config.Clock nil.
func Example() {
	clock := clockwork.NewFakeClock()
	b, err := breaker.New(breaker.Config{
		ConsecutiveFailures: 3,
		BreakJitter:         breaker.JitterNone, // exact breaks, for a reproducible example
		Clock:               clock,
		OnEvent: func(e pipeline.Event) {
			if t, ok := e.(breaker.Transition); ok {
				fmt.Printf("  breaker: %v -> %v (%v)\n", t.From, t.To, t.Cause)
			}
		},
	})
	if err != nil {
		panic(err)
	}
	p := pipeline.New(breaker.Guard[string](b))

	healthy := false
	call := func(context.Context) (string, error) {
		if !healthy {
			return "", errors.New("connection refused")
		}
		return "pong", nil
	}

	for i := 1; i <= 4; i++ {
		_, err := p.Execute(context.Background(), call)
		fmt.Printf("call %d: %v\n", i, err)
	}

	clock.Advance(15 * time.Second)
	fmt.Println("after the break, State reads", b.State())
	healthy = true
	for i := 5; i <= 6; i++ {
		v, err := p.Execute(context.Background(), call)
		fmt.Printf("call %d: %q %v\n", i, v, err)
	}
	fmt.Println("state:", b.State())

	// Output:
	// call 1: connection refused
	// call 2: connection refused
	//   breaker: closed -> open (consecutive failures)
	// call 3: connection refused
	// call 4: pipeline: breaker: dependency unavailable (retry after 15s)
	// after the break, State reads half-open
	//   breaker: open -> half-open (break elapsed)
	// call 5: "pong" <nil>
	//   breaker: half-open -> closed (probes succeeded)
	// call 6: "pong" <nil>
	// state: closed
}

// Driving a breaker by hand, outside a pipeline: Admit before the attempt, Done
// (or Record, with a duration you measured) after it, exactly once.
func ExampleBreaker_Admit() {
	b, err := breaker.New(breaker.Config{ConsecutiveFailures: 1, BreakJitter: breaker.JitterNone, Clock: clockwork.NewFakeClock()})
	if err != nil {
		panic(err)
	}
	attempt := func(fail bool) {
		t, err := b.Admit()
		if err != nil {
			se, _ := errors.AsType[*pipeline.StopError](err)
			fmt.Println("refused, retry after", se.RetryAfter)
			return
		}
		v := outcome.Verdict{}
		if fail {
			v = outcome.Verdict{Kind: outcome.Transient}
		}
		b.Done(t, v)
		fmt.Println("ran; breaker is", b.State())
	}
	attempt(true)
	attempt(false)
	b.Reset()
	attempt(false)
	// Output:
	// ran; breaker is open
	// refused, retry after 15s
	// ran; breaker is closed
}

// Isolate takes a dependency out of service until Reset.
func ExampleBreaker_Isolate() {
	b, _ := breaker.New(breaker.Config{})
	b.Isolate()
	_, err := b.Admit()
	fmt.Println(b.State(), errors.Is(err, pipeline.ErrDependencyUnavailable))
	b.Reset()
	fmt.Println(b.State())
	// Output:
	// isolated true
	// closed
}

// New refuses impossible settings, naming each one.
func ExampleConfig_Validate() {
	err := breaker.Config{HalfOpenProbes: -1, FailureRatio: 1.5}.Validate()
	fmt.Println(err)
	// Output:
	// breaker: Config.FailureRatio must lie between 0 and 1 (0 means off), got 1.5
	// breaker: Config.HalfOpenProbes must be at least 1 (0 means the default 1), got -1
}

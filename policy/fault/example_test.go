package fault_test

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/policy/fault"
)

// A game-day stage fails a quarter of the calls with a Transient error. The
// seeded source makes the run reproducible: these five calls get these
// faults, every time.
func Example() {
	chaos, err := fault.New(fault.Config[string]{
		Name:      "game day",
		Enabled:   true,
		Transient: 0.25,
		Rand:      rand.NewPCG(2026, 12),
	})
	if err != nil {
		panic(err)
	}
	p := pipeline.New[string](chaos)
	for range 5 {
		v, err := p.Execute(context.Background(), func(context.Context) (string, error) { return "ok", nil })
		if err != nil {
			v = err.Error()
		}
		fmt.Println(v)
	}
	// Output:
	// fault: injected transient failure
	// ok
	// ok
	// fault: injected transient failure
	// ok
}

// Impossible settings are refused, naming the field.
func ExampleNew_invalid() {
	_, err := fault.New(fault.Config[string]{Transient: 0.75, Permanent: 0.5})
	fmt.Println(err)
	// Output: fault: Config.Transient + Throttled + Permanent + Value must not exceed 1 (one call gets at most one of them), got 0.75 + 0 + 0.5 + 0 = 1.25
}

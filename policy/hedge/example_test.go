package hedge_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/latency"
	"github.com/resilience-go/pipeline/policy/hedge"
)

// A read whose first copy hangs is answered by its hedge. The stage and its
// estimator run on a fake clock that the example advances, so the output does
// not depend on the machine.
func Example() {
	clock := clockwork.NewFakeClock()
	est, err := latency.New(latency.Config{Clock: clock})
	if err != nil {
		panic(err)
	}
	// Twenty reads of 4 ms have been measured: the p95 is about 4 ms, so the
	// hedge delay is the 10 ms minimum.
	for range 20 {
		est.Record(est.Now(), 4*time.Millisecond)
	}
	h, err := hedge.New[string](hedge.Config{Estimator: est, Clock: clock})
	if err != nil {
		panic(err)
	}
	p := pipeline.New[string](h).With(pipeline.Options[string]{
		// The loser's value is released: here it is printed, where an HTTP
		// response's body would be closed.
		Release: func(v string) { fmt.Printf("released %q\n", v) },
		OnEvent: func(_ context.Context, _ pipeline.Source, e pipeline.Event) {
			if s, ok := e.(hedge.Hedged); ok {
				fmt.Printf("hedge %d sent after %v\n", s.Hedge, s.Delay)
			}
		},
	})

	// Advance the clock once the hedge's timer is waiting on it.
	go func() {
		_ = clock.BlockUntilContext(context.Background(), 1)
		clock.Advance(10 * time.Millisecond)
	}()
	var copies atomic.Int32 // the copies run on different goroutines
	v, err := p.Execute(hedge.Repeatable(context.Background()), func(ctx context.Context) (string, error) {
		if copies.Add(1) == 1 { // the first copy hangs until it is cancelled
			<-ctx.Done()
			return "first copy, cancelled", ctx.Err()
		}
		return "answer from the hedge", nil
	})
	fmt.Println(v, err)
	// Output:
	// hedge 1 sent after 10ms
	// released "first copy, cancelled"
	// answer from the hedge <nil>
}

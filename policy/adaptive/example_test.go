package adaptive_test

import (
	"context"
	"fmt"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/adaptive"
)

// A limiter driven outside a pipeline, as the simulation drives it, on a fake
// clock: a second of calls that use its whole limit grows it (the revision
// comes with the first call of the next second); a second of calls three
// times slower cuts it.
func Example() {
	clock := clockwork.NewFakeClock()
	l, err := adaptive.New(adaptive.Config{InitialLimit: 10, Clock: clock})
	if err != nil {
		panic(err)
	}
	second := func(latency time.Duration) {
		start := clock.Now()
		for clock.Since(start) < time.Second-latency {
			var tickets []adaptive.Ticket
			for {
				t, ok := l.TryAcquire(context.Background())
				if !ok {
					break
				}
				tickets = append(tickets, t)
			}
			clock.Advance(latency)
			for _, t := range tickets {
				l.Done(t, outcome.Verdict{})
			}
		}
		clock.Advance(time.Second - clock.Since(start))
	}
	report := func() {
		r := l.Snapshot().Last
		fmt.Printf("%s: %d -> %d\n", r.Why, r.From, r.To)
	}
	second(20 * time.Millisecond)
	second(20 * time.Millisecond)
	report()
	second(60 * time.Millisecond)
	second(60 * time.Millisecond)
	report()
	// Output:
	// grew: 10 -> 13
	// queued: 16 -> 8
}

// Impossible settings are refused, each naming its field.
func ExampleNew_invalid() {
	_, err := adaptive.New(adaptive.Config{MinLimit: 10, MaxLimit: 5, Tolerance: 0.5})
	fmt.Println(err)
	// Output:
	// adaptive: Config.MinLimit (10) must not be above Config.MaxLimit (5), defaults included
	// adaptive: Config.Tolerance must be a finite number above 1 (0 means the default 1.5), got 0.5
}

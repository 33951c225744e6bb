package throttle_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/throttle"
)

// A throttle in front of a dependency that starts to reject calls. At K 2,
// the accepts of the healthy spell cover as many rejections again; past
// that, the probability of a refusal climbs with the rejections, and the
// refused calls never reach the dependency. A window after the rejections
// stop, the throttle has forgotten them. (A fake clock and a seeded source
// keep the example exact.)
func Example() {
	clock := clockwork.NewFakeClock()
	th, err := throttle.New(throttle.Config{Name: "search", Clock: clock, Rand: rand.NewPCG(1, 2)})
	if err != nil {
		panic(err)
	}
	p := pipeline.New(throttle.Guard[string](th))
	overloaded := false
	sent := 0
	search := func(context.Context) (string, error) {
		sent++
		if overloaded {
			return "", outcome.MarkThrottled(errors.New("429 Too Many Requests"), 0)
		}
		return "results", nil
	}
	calls := func(n int) (refusal error) {
		for range n {
			clock.Advance(100 * time.Millisecond)
			if _, err := p.Execute(context.Background(), search); errors.Is(err, pipeline.DependencyUnavailable) {
				refusal = err
			}
		}
		return refusal
	}
	report := func(when string) {
		requests, accepts := th.Counts()
		fmt.Printf("%s: sent %d, %d requests, %d accepts, probability %.2f\n", when, sent, requests, accepts, th.RejectionProbability())
	}

	calls(100)
	report("healthy")
	overloaded, sent = true, 0
	calls(100)
	report("overloaded")
	sent = 0
	refusal := calls(300)
	report("still overloaded")
	fmt.Println(refusal)
	sent = 0
	clock.Advance(2 * time.Minute) // the default Window
	report("two minutes later")
	// Output:
	// healthy: sent 100, 100 requests, 100 accepts, probability 0.00
	// overloaded: sent 100, 200 requests, 100 accepts, probability 0.00
	// still overloaded: sent 185, 500 requests, 100 accepts, probability 0.60
	// pipeline: search: throttle: dependency unavailable
	// two minutes later: sent 0, 0 requests, 0 accepts, probability 0.00
}

// Admit and Record serve code outside a pipeline, as the simulation drives
// the throttle: a ticket for each admitted attempt, recorded with its
// verdict once it has one.
func ExampleThrottle_Admit() {
	th, err := throttle.New(throttle.Config{Clock: clockwork.NewFakeClock(), Rand: rand.NewPCG(3, 4)})
	if err != nil {
		panic(err)
	}
	attempt := func(v outcome.Verdict) {
		tk, err := th.Admit()
		if err != nil {
			fmt.Println("refused:", err)
			return
		}
		th.Record(tk, v)
		requests, accepts := th.Counts()
		fmt.Printf("%v: %d requests, %d accepts, probability %.2f\n", v.Kind, requests, accepts, th.RejectionProbability())
	}
	attempt(outcome.Verdict{})
	attempt(outcome.Verdict{Kind: outcome.Transient})
	attempt(outcome.Verdict{Kind: outcome.Transient})
	attempt(outcome.Verdict{Kind: outcome.Permanent, Canceled: true}) // the caller's: counts for nothing
	attempt(outcome.Verdict{Kind: outcome.Permanent})
	// Output:
	// ok: 1 requests, 1 accepts, probability 0.00
	// transient: 2 requests, 1 accepts, probability 0.00
	// transient: 3 requests, 1 accepts, probability 0.25
	// permanent: 3 requests, 1 accepts, probability 0.25
	// permanent: 4 requests, 2 accepts, probability 0.00
}

// Impossible settings are refused, each naming its field.
func ExampleNew_invalid() {
	_, err := throttle.New(throttle.Config{K: 0.5, MaxRejection: 1.5})
	fmt.Println(err)
	// Output:
	// throttle: Config.K must be a finite number of at least 1 (0 means the default 2), got 0.5
	// throttle: Config.MaxRejection must lie in (0, 1] (0 means the default 0.9, 1 no cap), got 1.5
}

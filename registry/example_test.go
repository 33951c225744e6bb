package registry_test

import (
	"fmt"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/resilience-go/pipeline/latency"
	"github.com/resilience-go/pipeline/registry"
)

// One latency estimator per host, at most two hosts at once, on a fake clock.
// The registry builds a host's estimator on its first use and evicts the host
// that has gone idle, or else the one it saw used longest ago.
func Example() {
	clock := clockwork.NewFakeClock()
	hosts, err := registry.New(registry.Config[string, *latency.Estimator]{
		New: func(host string) (*latency.Estimator, error) {
			fmt.Println("new estimator for", host)
			return latency.New(latency.Config{Clock: clock})
		},
		MaxKeys:   2,
		IdleAfter: 20 * time.Second,
		OnEvict:   func(host string, _ *latency.Estimator) { fmt.Println("evicted", host) },
		Clock:     clock,
	})
	if err != nil {
		panic(err)
	}
	record := func(host string, d time.Duration) {
		est, err := hosts.Get(host)
		if err != nil {
			panic(err)
		}
		est.Record(est.Now(), d)
	}

	record("a.example", 10*time.Millisecond)
	record("b.example", 20*time.Millisecond)
	record("a.example", 12*time.Millisecond) // the same estimator
	clock.Advance(20 * time.Second)
	record("a.example", 11*time.Millisecond)
	record("c.example", 30*time.Millisecond) // b.example has been idle for 20 s
	for host, est := range hosts.Range {
		_, n := est.Quantile(est.Now(), 0.5)
		fmt.Println(host, "holds", n, "samples")
	}
	// Output:
	// new estimator for a.example
	// new estimator for b.example
	// new estimator for c.example
	// evicted b.example
	// c.example holds 1 samples
	// a.example holds 3 samples
}

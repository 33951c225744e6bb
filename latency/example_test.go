package latency_test

import (
	"fmt"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/resilience-go/pipeline/latency"
)

// An Estimator shared by the code that measures attempts and the code that
// reads a live p95 from it, here on a fake clock.
func Example() {
	clock := clockwork.NewFakeClock()
	est, err := latency.New(latency.Config{Clock: clock}) // 30 s window, 10 slices
	if err != nil {
		panic(err)
	}

	p95, n := est.Quantile(est.Now(), 0.95)
	fmt.Println("cold:", p95, n)

	for i := 1; i <= 100; i++ { // attempts of 1 ms .. 100 ms
		start := est.Now()
		clock.Advance(time.Duration(i) * time.Millisecond)
		end := est.Now()
		est.Record(end, end-start)
	}
	p95, n = est.Quantile(est.Now(), 0.95)
	fmt.Println("p95:", p95.Round(time.Millisecond), "from", n, "samples")

	clock.Advance(est.Window()) // a window of silence
	p95, n = est.Quantile(est.Now(), 0.95)
	fmt.Println("idle:", p95, n)
	// Output:
	// cold: 0s 0
	// p95: 95ms from 100 samples
	// idle: 0s 0
}

package latency_test

import (
	"fmt"
	"sync"
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

// A Window embedded in an owner that has its own lock and clock reading, the
// way a circuit breaker keeps the median of its successful attempts over five
// minutes.
func ExampleWindow() {
	type owner struct {
		mu     sync.Mutex
		normal *latency.Window
	}
	w, err := latency.NewWindow(5*time.Minute, 10)
	if err != nil {
		panic(err)
	}
	o := &owner{normal: w}

	// now is the owner's clock reading that ended each attempt.
	for i := range 40 {
		now := time.Duration(i) * time.Second
		o.mu.Lock()
		o.normal.Add(now, 20*time.Millisecond)
		median, n := o.normal.Quantile(now, 0.5)
		o.mu.Unlock()
		if i == 39 {
			fmt.Println(median.Round(time.Millisecond), n)
		}
	}
	// Every attempt took 20 ms, and the median reads 20 ms: the forty samples
	// share the bucket [19.95 ms, 23.73 ms), and the bucket's mean places them.

	// Output:
	// 20ms 40
}

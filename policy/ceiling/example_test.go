package ceiling_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/latency"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/ceiling"
	"github.com/resilience-go/pipeline/policy/timeout"
)

// An attempt stuck far past the dependency's normal latency is cut at three
// times its measured p95. (The floor is lowered to a microsecond and the
// measured latency is tens of microseconds, so that the example does not
// wait.)
func Example() {
	est, err := latency.New(latency.Config{})
	if err != nil {
		panic(err)
	}
	for range 50 { // the default MinSamples: the attempts measured so far took 20 µs
		est.Record(est.Now(), 20*time.Microsecond)
	}
	c, err := ceiling.New[string](ceiling.Config{Estimator: est, Floor: time.Microsecond})
	if err != nil {
		panic(err)
	}
	p95, _ := est.Quantile(est.Now(), 0.95) // read by bucket, to within 19%
	limit, armed := c.Limit(est.Now())
	fmt.Println(armed, p95, limit)

	_, err = pipeline.Execute(context.Background(), func(ctx context.Context) (string, error) {
		<-ctx.Done() // stuck, but honouring its context
		return "", ctx.Err()
	}, c)
	cut, _ := errors.AsType[*timeout.Error](err)
	fmt.Println(errors.Is(err, outcome.ErrTimeout), cut.Duration == limit)
	// Output:
	// true 20.464µs 61.392µs
	// true true
}

// Impossible settings are refused, naming the field.
func ExampleNew_invalid() {
	_, err := ceiling.New[string](ceiling.Config{Multiple: 0.5})
	fmt.Println(err)
	// Output: ceiling: Config.Multiple must be a finite number of at least 1 (0 means the default 3), got 0.5
}

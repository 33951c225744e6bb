package bulkhead_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/policy/bulkhead"
)

// A bulkhead of one slot and no queue refuses a call that arrives while
// another is inside.
func Example() {
	b, err := bulkhead.New(bulkhead.Config{Name: "db", MaxConcurrent: 1})
	if err != nil {
		panic(err)
	}
	p := pipeline.New(bulkhead.Guard[string](b))
	outer, err := p.Execute(context.Background(), func(ctx context.Context) (string, error) {
		// A second call while this one holds the only slot.
		_, err := p.Execute(ctx, func(context.Context) (string, error) { return "inner", nil })
		if stop, isStop := errors.AsType[*pipeline.StopError](err); isStop {
			fmt.Println("refused by", stop.Stage, stop.Name)
		}
		return "outer", nil
	})
	fmt.Println(outer, err, b.InFlight())
	// Output:
	// refused by bulkhead db
	// outer <nil> 0
}

// Impossible settings are refused, naming the field.
func ExampleNew_invalid() {
	_, err := bulkhead.New(bulkhead.Config{MaxConcurrent: 8, MaxQueue: -1})
	fmt.Println(err)
	// Output: bulkhead: Config.MaxQueue must not be negative (0 means no queue), got -1
}

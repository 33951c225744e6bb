package bulkhead_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/criticality"
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

// With a TenantShare of 0.5, one tenant holds at most half of the slots its
// level may fill: a noisy tenant is refused at its half, and the other
// tenant still finds its own.
func ExampleConfig_tenantShare() {
	b, err := bulkhead.New(bulkhead.Config{Name: "api", MaxConcurrent: 4, TenantShare: 0.5})
	if err != nil {
		panic(err)
	}
	noisy := criticality.WithTenant(context.Background(), "acme")
	quiet := criticality.WithTenant(context.Background(), "globex")
	for i := range 3 {
		_, ok := b.TryAcquire(noisy)
		fmt.Println("acme call", i+1, "admitted:", ok)
	}
	for i := range 2 {
		_, ok := b.TryAcquire(quiet)
		fmt.Println("globex call", i+1, "admitted:", ok)
	}
	b.Release(noisy) // the context the slot was taken with: acme's is given back
	_, ok := b.TryAcquire(noisy)
	fmt.Println("acme again:", ok, "in flight:", b.InFlight())
	// Output:
	// acme call 1 admitted: true
	// acme call 2 admitted: true
	// acme call 3 admitted: false
	// globex call 1 admitted: true
	// globex call 2 admitted: true
	// acme again: true in flight: 4
}

// A guarantee keeps a slot of four for Sheddable calls: Critical ones may
// borrow it while no Sheddable call comes, and once one has found the
// bulkhead full, the next slot given back is kept for it.
func ExampleConfig_guarantees() {
	b, err := bulkhead.New(bulkhead.Config{Name: "api", MaxConcurrent: 4,
		Guarantees: criticality.Guarantees{Sheddable: 0.25}})
	if err != nil {
		panic(err)
	}
	critical := criticality.With(context.Background(), criticality.Critical)
	sheddable := criticality.With(context.Background(), criticality.Sheddable)
	n := 0
	for {
		if _, ok := b.TryAcquire(critical); !ok {
			break
		}
		n++
	}
	fmt.Println("critical calls admitted:", n)
	_, ok := b.TryAcquire(sheddable)
	fmt.Println("sheddable admitted:", ok)
	b.Release(critical)
	_, ok = b.TryAcquire(critical)
	fmt.Println("critical admitted to the freed slot:", ok)
	_, ok = b.TryAcquire(sheddable)
	fmt.Println("sheddable admitted to the freed slot:", ok)
	// Output:
	// critical calls admitted: 4
	// sheddable admitted: false
	// critical admitted to the freed slot: false
	// sheddable admitted to the freed slot: true
}

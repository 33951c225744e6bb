package fleet_test

import (
	"context"
	"log"

	"github.com/redis/go-redis/v9"

	"github.com/resilience-go/pipeline/fleet"
	"github.com/resilience-go/pipeline/policy/breaker"
)

// A process shares its breaker for "payments" with the rest of the checkout
// service. The example needs a Redis, so it is compiled but not run.
func Example() {
	rdb := redis.NewClient(&redis.Options{Addr: "redis:6379", ContextTimeoutEnabled: true})
	defer rdb.Close()
	f, err := fleet.New(fleet.Config{Redis: rdb, Namespace: "checkout"})
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()

	b, err := breaker.New(breaker.Config{Name: "payments"})
	if err != nil {
		log.Fatal(err)
	}
	stop, err := f.Watch(b) // reads the fleet's view once: b may start open
	if err != nil {
		log.Fatal(err)
	}
	defer stop()

	// An operator switches payments off for every process, and on again.
	ctx := context.Background()
	if err := f.Isolate(ctx, "payments"); err != nil {
		log.Print(err)
	}
	if err := f.Reset(ctx, "payments"); err != nil {
		log.Print(err)
	}
}

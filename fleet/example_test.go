package fleet_test

import (
	"context"
	"log"
	"net/http"

	"github.com/redis/go-redis/v9"

	"github.com/resilience-go/pipeline"
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

// Every process of the checkout service shares the partner's quota of 1,000
// requests a minute. The example needs a Redis, so it is compiled but not
// run.
func ExampleQuotaGuard() {
	rdb := redis.NewClient(&redis.Options{Addr: "redis:6379", ContextTimeoutEnabled: true})
	defer rdb.Close()
	q, err := fleet.NewQuota(fleet.QuotaConfig{
		Redis:     rdb,
		Namespace: "checkout",
		Name:      "partner",
		Rate:      1000.0 / 60, // for the whole fleet
		Processes: 20,          // until it first reaches Redis, a process's share is 1/20 of it
	})
	if err != nil {
		log.Fatal(err)
	}
	defer q.Close()

	pl := pipeline.New(fleet.QuotaGuard[*http.Response](q))
	resp, err := pl.Execute(context.Background(), func(ctx context.Context) (*http.Response, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://partner.example/api", nil)
		if err != nil {
			return nil, err
		}
		return http.DefaultClient.Do(req)
	})
	if err != nil {
		log.Print(err) // a refusal: pipeline: quota "partner": rate limited (retry after 60ms)
		return
	}
	resp.Body.Close()
}

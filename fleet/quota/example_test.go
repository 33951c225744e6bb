package quota_test

import (
	"context"
	"log"
	"net/http"

	"github.com/redis/go-redis/v9"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/fleet/quota"
)

// Every process of the checkout service shares the partner's quota of 1,000
// requests a minute. The example needs a Redis, so it is compiled but not
// run.
func ExampleGuard() {
	rdb := redis.NewClient(&redis.Options{Addr: "redis:6379", ContextTimeoutEnabled: true})
	defer rdb.Close()
	q, err := quota.New(quota.Config{
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

	pl := pipeline.New(quota.Guard[*http.Response](q))
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

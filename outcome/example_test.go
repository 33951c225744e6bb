package outcome_test

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"time"

	"github.com/resilience-go/pipeline/outcome"
)

// Errors can be classified where they happen.
func ExampleMarkPermanent() {
	err := outcome.MarkPermanent(errors.New("invalid account number"))
	fmt.Println(outcome.Of(err))
	fmt.Println(outcome.Of(fmt.Errorf("dial: %w", syscall.ECONNREFUSED)))
	fmt.Println(outcome.Of(outcome.MarkThrottled(errors.New("slow down"), 2*time.Second)))
	// Output:
	// permanent
	// transient
	// throttled (retry after 2s)
}

// An HTTP response is classified by its status code and Retry-After header.
func ExampleHTTPStatus() {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	fmt.Println(outcome.HTTPStatus(200, "", now))
	fmt.Println(outcome.HTTPStatus(503, "", now))
	fmt.Println(outcome.HTTPStatus(429, "30", now))
	fmt.Println(outcome.HTTPStatus(404, "", now))
	// Output:
	// ok
	// transient
	// throttled (retry after 30s)
	// permanent
}

// The caller's own cancellation is never the dependency's fault.
func ExampleClassify() {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	v := outcome.Classify[int](ctx, 0, syscall.ECONNRESET, nil)
	fmt.Println(v, v.Retryable(), v.Failure())
	// Output: permanent (canceled by caller) false false
}

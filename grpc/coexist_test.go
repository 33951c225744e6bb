package pipelinegrpc_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/resilience-go/pipeline"
	pipelinegrpc "github.com/resilience-go/pipeline/grpc"
)

// retryingServiceConfig is a service config whose retryPolicy has gRPC retry
// every method of TestService three times after Unavailable.
const retryingServiceConfig = `{"methodConfig": [{
	"name": [{"service": "grpc.testing.TestService"}],
	"retryPolicy": {
		"maxAttempts": 3,
		"initialBackoff": "0.001s",
		"maxBackoff": "0.001s",
		"backoffMultiplier": 1,
		"retryableStatusCodes": ["UNAVAILABLE"]
	}
}]}`

// TestRetriesAreMadeInOnePlace sends an idempotent call that always fails
// with Unavailable on channels whose service config has gRPC retry it three
// times, counting the attempts our pipeline makes and those the server
// sees. Installed by hand, the client leaves the retries to gRPC; installed
// with DialOptions, it turns gRPC's off and makes its own; either way the
// server sees three, not nine.
func TestRetriesAreMadeInOnePlace(t *testing.T) {
	for _, tc := range []struct {
		name    string
		options func(*pipelinegrpc.Client) []grpc.DialOption
		ours    int64
	}{
		{"interceptors chained by hand", func(c *pipelinegrpc.Client) []grpc.DialOption {
			return []grpc.DialOption{grpc.WithChainUnaryInterceptor(c.Unary), grpc.WithChainStreamInterceptor(c.Stream)}
		}, 1},
		{"DialOptions", (*pipelinegrpc.Client).DialOptions, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			svc := &service{unary: failing(codes.Unavailable)}
			srv := serve(t, svc)
			var ours atomic.Int64
			c := newClient(t, clockwork.NewFakeClock(), noTrip, func(cfg *pipelinegrpc.Config) {
				cfg.OnEvent = func(_ context.Context, _ pipeline.Source, e pipeline.Event) {
					if _, ok := e.(pipeline.AttemptFinished); ok {
						ours.Add(1)
					}
				}
			})
			opts := append(tc.options(c), grpc.WithDefaultServiceConfig(retryingServiceConfig))
			_, err := srv.dial(t, "a", opts...).UnaryCall(within(t), request("x"))
			assert.Equal(t, codes.Unavailable, status.Code(err))
			assert.Equal(t, tc.ours, ours.Load(), "attempts of ours")
			assert.Equal(t, 3, svc.Calls(unaryMethod), "attempts the server saw")
		})
	}
}

// TestHandChainedInterceptorsRetryWithoutAServiceConfig installs the
// interceptors by hand on a channel with no service config: nothing else
// retries, so the client does.
func TestHandChainedInterceptorsRetryWithoutAServiceConfig(t *testing.T) {
	svc := &service{unary: failing(codes.Unavailable)}
	srv := serve(t, svc)
	c := newClient(t, clockwork.NewFakeClock(), noTrip)
	client := srv.dial(t, "a", grpc.WithChainUnaryInterceptor(c.Unary), grpc.WithChainStreamInterceptor(c.Stream))
	_, err := client.UnaryCall(within(t), request("x"))
	assert.Equal(t, codes.Unavailable, status.Code(err))
	assert.Equal(t, 3, svc.Calls(unaryMethod))
}

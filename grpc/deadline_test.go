package pipelinegrpc_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/status"

	"github.com/resilience-go/pipeline"
	pipelinegrpc "github.com/resilience-go/pipeline/grpc"
)

// deadlineOf returns a unary handler that reports how long its call had
// left, then echoes.
func deadlineOf(left chan<- time.Duration) func(context.Context, int, *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error) {
	return func(ctx context.Context, _ int, req *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error) {
		d, ok := ctx.Deadline()
		if !ok {
			left <- -1
		} else {
			left <- time.Until(d)
		}
		return echo(req), nil
	}
}

// TestTheServerSeesTheDeadline sends calls with our attempt timeout of 2 s
// and no deadline of the caller's, then with the caller's deadline of 1 s:
// the server's context has the shorter of the two, as gRPC sent it, with
// only the time in transit gone.
func TestTheServerSeesTheDeadline(t *testing.T) {
	left := make(chan time.Duration, 1)
	srv := serve(t, &service{unary: deadlineOf(left)})
	c := newClient(t, clockwork.NewFakeClock(), func(cfg *pipelinegrpc.Config) {
		cfg.Standard.Timeout = 5 * time.Second
		cfg.Standard.AttemptTimeout = 2 * time.Second
	})
	client := srv.dial(t, "a", c.DialOptions()...)

	_, err := client.UnaryCall(context.Background(), request("x"))
	require.NoError(t, err)
	got := wait(t, left, "the call")
	assert.LessOrEqual(t, got, 2*time.Second)
	assert.Greater(t, got, time.Second, "the server saw %v left", got)

	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, err = client.UnaryCall(ctx, request("x"))
	require.NoError(t, err)
	got = wait(t, left, "the call")
	assert.LessOrEqual(t, got, time.Second)
	assert.Greater(t, got, 500*time.Millisecond, "the server saw %v left", got)
}

// TestOurAttemptTimeoutIsRetried lets the first attempt hang past our
// attempt timeout: the attempt ends with DeadlineExceeded, which is
// Transient, so the call is sent again and succeeds.
func TestOurAttemptTimeoutIsRetried(t *testing.T) {
	firstLeft := make(chan time.Duration, 1)
	svc := &service{unary: func(ctx context.Context, n int, req *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error) {
		if n == 1 {
			d, _ := ctx.Deadline()
			firstLeft <- time.Until(d)
			<-ctx.Done()
			return nil, status.FromContextError(ctx.Err()).Err()
		}
		return echo(req), nil
	}}
	srv := serve(t, svc)
	c := newClient(t, clockwork.NewFakeClock(), func(cfg *pipelinegrpc.Config) {
		cfg.Standard.AttemptTimeout = 50 * time.Millisecond
	})
	resp, err := srv.dial(t, "a", c.DialOptions()...).UnaryCall(within(t), request("x"))
	require.NoError(t, err)
	assert.Equal(t, "x", string(resp.GetPayload().GetBody()))
	assert.Equal(t, 2, svc.Calls(unaryMethod))
	left := wait(t, firstLeft, "the first attempt")
	assert.LessOrEqual(t, left, 50*time.Millisecond, "the server did not learn of our attempt's deadline")
	assert.Positive(t, left)
}

// TestTheCallersDeadlineAndCancellationAreTheCallers lets the server hang
// until the caller's deadline passes, or until the caller cancels: the call
// ends with the caller's code, is not sent again, and the breaker records
// no failure against the server.
func TestTheCallersDeadlineAndCancellationAreTheCallers(t *testing.T) {
	for _, tc := range []struct {
		name string
		code codes.Code
		ctx  func(started <-chan struct{}) context.Context
	}{
		{"deadline", codes.DeadlineExceeded, func(<-chan struct{}) context.Context {
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			t.Cleanup(cancel)
			return ctx
		}},
		{"cancellation", codes.Canceled, func(started <-chan struct{}) context.Context {
			ctx, cancel := context.WithCancel(context.Background())
			t.Cleanup(cancel)
			go func() {
				<-started
				cancel()
			}()
			return ctx
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			started := make(chan struct{}, 1)
			svc := &service{unary: func(ctx context.Context, _ int, _ *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error) {
				started <- struct{}{}
				<-ctx.Done()
				return nil, status.FromContextError(ctx.Err()).Err()
			}}
			srv := serve(t, svc)
			c := newClient(t, clockwork.NewFakeClock())
			_, err := srv.dial(t, "a", c.DialOptions()...).UnaryCall(tc.ctx(started), request("x"))
			assert.Equal(t, tc.code, status.Code(err), "%v", err)
			assert.Equal(t, 1, svc.Calls(unaryMethod))
			scope, err := c.Scope(pipelinegrpc.Key{Target: "passthrough:///a"})
			require.NoError(t, err)
			assert.Zero(t, scope.Breaker.Snapshot().ConsecutiveFailures, "the caller's own end counted against the server")
		})
	}
}

// TestAnAttemptTheCallersDeadlineBoundIsTheCallers answers with
// DeadlineExceeded before the caller's deadline (shorter than our attempt
// timeout) has passed on the client: the server ran out of the caller's
// time, so the call is not sent again, and the breaker records no failure.
func TestAnAttemptTheCallersDeadlineBoundIsTheCallers(t *testing.T) {
	svc := &service{unary: func(context.Context, int, *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error) {
		return nil, status.Error(codes.DeadlineExceeded, "the caller's time ran out here")
	}}
	srv := serve(t, svc)
	c := newClient(t, clockwork.NewFakeClock())
	client := srv.dial(t, "a", c.DialOptions()...)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second) // our attempt timeout is 10 s
	defer cancel()
	_, err := client.UnaryCall(ctx, request("x"))
	assert.Equal(t, codes.DeadlineExceeded, status.Code(err))
	assert.Equal(t, 1, svc.Calls(unaryMethod), "the caller's deadline was retried")
	stop, ok := errors.AsType[*pipeline.StopError](err)
	require.True(t, ok, "%v", err)
	assert.Equal(t, pipeline.Deadline, stop.Reason, "the caller's deadline, as it will be a moment later")
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	scope, err := c.Scope(pipelinegrpc.Key{Target: "passthrough:///a"})
	require.NoError(t, err)
	assert.Zero(t, scope.Breaker.Snapshot().ConsecutiveFailures)

	_, err = client.UnaryCall(context.Background(), request("x")) // no deadline of the caller's: ours bound it
	assert.Equal(t, codes.DeadlineExceeded, status.Code(err))
	assert.ErrorIs(t, err, pipeline.AttemptsExhausted)
	assert.Equal(t, 4, svc.Calls(unaryMethod))
}

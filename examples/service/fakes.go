package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	grpchealth "google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
)

// fakes are the upstreams the service calls when it is given none: an HTTP
// server and a gRPC server with the standard health service, both on
// loopback, both misbehaving as their faults say.
type fakes struct {
	url    string // the HTTP upstream's, "http://127.0.0.1:port/"
	target string // the gRPC upstream's, "127.0.0.1:port"

	http    *http.Server
	grpc    *grpc.Server
	serving sync.WaitGroup // the two Serve calls
}

// startFakes starts both fakes on loopback ports of their own.
func startFakes(f *faults) (*fakes, error) {
	httpLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("fake HTTP upstream: %w", err)
	}
	grpcLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		_ = httpLn.Close()
		return nil, fmt.Errorf("fake gRPC upstream: %w", err)
	}
	fk := &fakes{
		url:    "http://" + httpLn.Addr().String() + "/",
		target: grpcLn.Addr().String(),
		http:   &http.Server{Handler: fakeHandler(f), ReadHeaderTimeout: 5 * time.Second},
		grpc:   grpc.NewServer(grpc.UnaryInterceptor(fakeInterceptor(f))),
	}
	healthpb.RegisterHealthServer(fk.grpc, grpchealth.NewServer()) // every service SERVING
	fk.serving.Go(func() { _ = fk.http.Serve(httpLn) })
	fk.serving.Go(func() { _ = fk.grpc.Serve(grpcLn) })
	return fk, nil
}

// close stops both fakes at once, cutting whatever they were serving, and
// returns once both have stopped serving.
func (fk *fakes) close() error {
	err := fk.http.Close()
	fk.grpc.Stop()
	fk.serving.Wait()
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// fakeHandler answers each request as f judges it: a 503 for a failure,
// after a wait for a slow one, and a line of text otherwise.
func fakeHandler(f *faults) http.Handler {
	judge := f.judge()
	var answers atomic.Uint64
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v := judge(time.Now())
		if !pause(r.Context(), v.wait) {
			return // the caller left: a hedge's loser, a call that timed out
		}
		if v.fail {
			http.Error(w, "fake upstream: failing on purpose", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintf(w, "fake upstream: answer %d\n", answers.Add(1))
	})
}

// fakeInterceptor runs each RPC as f judges it: Unavailable for a failure,
// after a wait for a slow one, and the service's own answer otherwise.
func fakeInterceptor(f *faults) grpc.UnaryServerInterceptor {
	judge := f.judge()
	return func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		v := judge(time.Now())
		if !pause(ctx, v.wait) {
			return nil, status.FromContextError(ctx.Err()).Err()
		}
		if v.fail {
			return nil, status.Error(codes.Unavailable, "fake upstream: failing on purpose")
		}
		return handler(ctx, req)
	}
}

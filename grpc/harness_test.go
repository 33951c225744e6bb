package pipelinegrpc_test

import (
	"context"
	"io"
	"math/rand/v2"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/test/bufconn"

	pipelinegrpc "github.com/resilience-go/pipeline/grpc"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/retry"
	"github.com/resilience-go/pipeline/standard"
)

// The methods of grpc's TestService the tests call.
const (
	testService  = "/grpc.testing.TestService/"
	unaryMethod  = testService + "UnaryCall"
	streamMethod = testService + "StreamingOutputCall"
)

// eventually bounds every wait for something another goroutine does; no test
// waits this long unless it is failing.
const eventually = 10 * time.Second

// service is TestService with faults: UnaryCall and StreamingOutputCall run
// the handler a test gives them, with the number of the call (1 for the
// first) and the request; without one they echo the request's payload.
// FullDuplexCall echoes every message until the client closes.
type service struct {
	testgrpc.UnimplementedTestServiceServer

	unary  func(ctx context.Context, n int, req *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error)
	stream func(n int, req *testgrpc.StreamingOutputCallRequest, ss grpc.ServerStreamingServer[testgrpc.StreamingOutputCallResponse]) error

	mu    sync.Mutex
	calls map[string]int // guarded by mu: calls per method
}

// count counts a call of method and returns its number.
func (s *service) count(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.calls == nil {
		s.calls = map[string]int{}
	}
	s.calls[method]++
	return s.calls[method]
}

// Calls returns the number of calls of method so far.
func (s *service) Calls(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[method]
}

func (s *service) UnaryCall(ctx context.Context, req *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error) {
	n := s.count(unaryMethod)
	if s.unary != nil {
		return s.unary(ctx, n, req)
	}
	return echo(req), nil
}

func (s *service) StreamingOutputCall(req *testgrpc.StreamingOutputCallRequest, ss grpc.ServerStreamingServer[testgrpc.StreamingOutputCallResponse]) error {
	n := s.count(streamMethod)
	if s.stream != nil {
		return s.stream(n, req, ss)
	}
	return ss.Send(&testgrpc.StreamingOutputCallResponse{Payload: req.GetPayload()})
}

func (s *service) FullDuplexCall(ss grpc.BidiStreamingServer[testgrpc.StreamingOutputCallRequest, testgrpc.StreamingOutputCallResponse]) error {
	s.count(testService + "FullDuplexCall")
	for {
		req, err := ss.Recv()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := ss.Send(&testgrpc.StreamingOutputCallResponse{Payload: req.GetPayload()}); err != nil {
			return err
		}
	}
}

// echo is the reply that echoes req's payload.
func echo(req *testgrpc.SimpleRequest) *testgrpc.SimpleResponse {
	return &testgrpc.SimpleResponse{Payload: req.GetPayload()}
}

// request returns a request whose payload is body.
func request(body string) *testgrpc.SimpleRequest {
	return &testgrpc.SimpleRequest{Payload: &testgrpc.Payload{Body: []byte(body)}}
}

// server is a gRPC server serving svc on an in-memory listener.
type server struct {
	svc *service
	lis *bufconn.Listener
}

// serve starts a server of svc with opts; the test stops it when it ends.
func serve(t testing.TB, svc *service, opts ...grpc.ServerOption) *server {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	srv := grpc.NewServer(opts...)
	testgrpc.RegisterTestServiceServer(srv, svc)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(lis)
	}()
	t.Cleanup(func() {
		srv.Stop()
		<-done
	})
	return &server{svc: svc, lis: lis}
}

// dial returns a client of the server on a channel whose target is
// "passthrough:///"+name, with opts; the test closes it when it ends.
func (s *server) dial(t testing.TB, name string, opts ...grpc.DialOption) testgrpc.TestServiceClient {
	t.Helper()
	opts = append([]grpc.DialOption{
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return s.lis.DialContext(ctx) }),
	}, opts...)
	conn, err := grpc.NewClient("passthrough:///"+name, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	return testgrpc.NewTestServiceClient(conn)
}

// noWait is a backoff that retries at once, so that tests on a fake clock
// need not advance it between attempts.
var noWait = retry.BackoffFunc(func(int, outcome.Verdict, rand.Source) time.Duration { return 0 })

// newClient returns a client for the tests: on clock, every method of
// TestService idempotent, retries at once and no pause after a refusal,
// then changed by each of adjust.
func newClient(t testing.TB, clock clockwork.Clock, adjust ...func(*pipelinegrpc.Config)) *pipelinegrpc.Client {
	t.Helper()
	cfg := pipelinegrpc.Config{
		Standard: standard.Config{Retry: retry.Config{Backoff: noWait, RefusalPause: -1}},
		Methods:  map[string]pipelinegrpc.Method{testService: {Idempotent: true}},
		Clock:    clock,
	}
	for _, f := range adjust {
		f(&cfg)
	}
	c, err := pipelinegrpc.New(cfg)
	require.NoError(t, err)
	return c
}

// within returns a context that ends after eventually, for a test's calls.
func within(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), eventually)
	t.Cleanup(cancel)
	return ctx
}

// wait receives from ch, failing the test if nothing comes in time.
func wait[V any](t testing.TB, ch <-chan V, what string) V {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(eventually):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

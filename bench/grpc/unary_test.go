package grpcbench_test

// The unary benchmarks: one UnaryCall over loopback TCP through a bare
// channel, through our Client (every default, the method declared
// idempotent; without the hedge; and a method sent once) and through
// failsafe-go's failsafegrpc interceptor with our composition less the hedge
// and the attempt timeout (failsafe) and with all of it (failsafe-card).
// docs/grpc.md gives the figures and the command. They live in the
// benchmark module, so that failsafe-go stays out of the gRPC module.

import (
	"context"
	"math/rand/v2"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/failsafe-go/failsafe-go"
	fsbudget "github.com/failsafe-go/failsafe-go/budget"
	"github.com/failsafe-go/failsafe-go/circuitbreaker"
	"github.com/failsafe-go/failsafe-go/failsafegrpc"
	"github.com/failsafe-go/failsafe-go/hedgepolicy"
	fstimeout "github.com/failsafe-go/failsafe-go/timeout"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"

	pipelinegrpc "github.com/resilience-go/pipeline/grpc"
	"github.com/resilience-go/pipeline/internal/breakerconf"
	"github.com/resilience-go/pipeline/internal/hedgerule"
	"github.com/resilience-go/pipeline/internal/retryrule"
	"github.com/resilience-go/pipeline/standard"
)

// benchRow is one way to call: the options of its channel, and whether each
// call carries a deadline of the caller's.
type benchRow struct {
	name     string
	opts     func(b *testing.B) []grpc.DialOption
	deadline bool
}

// ours returns our client's options, with cfg and UnaryCall declared
// idempotent unless once.
func ours(cfg pipelinegrpc.Config, once bool) func(b *testing.B) []grpc.DialOption {
	return func(b *testing.B) []grpc.DialOption {
		if !once {
			cfg.Methods = map[string]pipelinegrpc.Method{unaryMethod: {Idempotent: true}}
		}
		c, err := pipelinegrpc.New(cfg)
		if err != nil {
			b.Fatal(err)
		}
		return c.DialOptions()
	}
}

// failsafePolicies is our standard pipeline's first three stages in
// failsafe-go's policies: a 30 s timeout (our whole call's), failsafegrpc's
// retry policy (Unavailable, DeadlineExceeded, ResourceExhausted) with three
// attempts and a budget, a count-based breaker set to our defaults; and, if
// card, the other two: a hedge sharing the retry's budget and a 10 s attempt
// timeout inside it. The hedge's delay is fixed at our hedge's shortest
// (hedgerule.DefaultMinDelay, 10 ms), the delay ours has on loopback, where a
// call takes tens of microseconds: armed on every call, it never fires, in
// either client.
func failsafePolicies(card bool) []failsafe.Policy[*testgrpc.SimpleResponse] {
	type R = *testgrpc.SimpleResponse
	cb := circuitbreaker.NewBuilder[R]().
		WithFailureThresholdRatio(breakerconf.DefaultConsecutiveFailures, breakerconf.DefaultConsecutiveFailures).
		WithSuccessThreshold(breakerconf.DefaultProbeSuccesses).
		WithDelay(breakerconf.DefaultBreakDuration).
		Build()
	funds := fsbudget.New()
	rp := failsafegrpc.NewRetryPolicyBuilder[R]().WithMaxAttempts(retryrule.DefaultMaxAttempts).WithBudget(funds).Build()
	policies := []failsafe.Policy[R]{fstimeout.New[R](presetTimeout), rp, cb}
	if card {
		hp := hedgepolicy.NewBuilderWithDelay[R](hedgerule.DefaultMinDelay).WithBudget(funds).Build()
		policies = append(policies, hp, fstimeout.New[R](presetAttemptTimeout))
	}
	return policies
}

// failsafeOptions is failsafegrpc's interceptor with failsafePolicies(card),
// gRPC's own retries off, as DialOptions does.
func failsafeOptions(card bool) func(*testing.B) []grpc.DialOption {
	return func(*testing.B) []grpc.DialOption {
		icpt := failsafegrpc.NewUnaryClientInterceptor(failsafePolicies(card)...)
		return []grpc.DialOption{grpc.WithDisableRetry(), grpc.WithUnaryInterceptor(icpt)}
	}
}

// benchRows are the rows, in order.
var benchRows = []benchRow{
	{"bare", func(*testing.B) []grpc.DialOption { return nil }, false},
	{"bare-deadline", func(*testing.B) []grpc.DialOption { return nil }, true},
	{"ours", ours(pipelinegrpc.Config{}, false), false},
	{"ours-nohedge", ours(pipelinegrpc.Config{Standard: standard.Config{NoHedge: true}}, false), false},
	{"ours-once", ours(pipelinegrpc.Config{}, true), false},
	{"failsafe", failsafeOptions(false), false},
	{"failsafe-card", failsafeOptions(true), false},
}

// unaryMethod is the full name of the method every row calls.
// presetTimeout and presetAttemptTimeout are the preset's two timeouts, for
// the peers' pipelines built to match it.
var presetTimeout, presetAttemptTimeout = standard.Config{}.Timeouts()

const unaryMethod = "/grpc.testing.TestService/UnaryCall"

// service is the TestService every row calls: it echoes a unary call's
// payload.
type service struct {
	testgrpc.UnimplementedTestServiceServer
}

func (service) UnaryCall(_ context.Context, req *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error) {
	return &testgrpc.SimpleResponse{Payload: req.GetPayload()}, nil
}

// request is a unary call's request carrying body.
func request(body string) *testgrpc.SimpleRequest {
	return &testgrpc.SimpleRequest{Payload: &testgrpc.Payload{Body: []byte(body)}}
}

// loopback serves the echoing TestService on a loopback TCP port, until the
// benchmark ends.
func loopback(b *testing.B) string {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := grpc.NewServer()
	testgrpc.RegisterTestServiceServer(srv, &service{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(lis)
	}()
	b.Cleanup(func() {
		srv.Stop()
		<-done
	})
	return lis.Addr().String()
}

// caller returns a function that sends one UnaryCall of row over a channel
// of its own to addr and checks the reply; warmed up, so that the channel
// is connected and our hedge armed (its estimator trusts its estimate), as
// on a steady service. A row with a deadline gives each call the caller's
// deadline of 30 s (the preset's timeout).
func caller(b *testing.B, addr string, row benchRow) func() {
	conn, err := grpc.NewClient(addr, append(row.opts(b), grpc.WithTransportCredentials(insecure.NewCredentials()))...)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = conn.Close() })
	client := testgrpc.NewTestServiceClient(conn)
	req := request("ping")
	ctx := context.Background()
	call := func() {
		ctx := ctx
		if row.deadline {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, presetTimeout)
			defer cancel()
		}
		resp, err := client.UnaryCall(ctx, req)
		if err != nil || string(resp.GetPayload().GetBody()) != "ping" {
			b.Fatalf("%v %v", resp, err)
		}
	}
	for range 50 {
		call()
	}
	return call
}

// BenchmarkUnary is one UnaryCall of a small message over loopback TCP, on
// the success path: Unary/bare (the floor), Unary/bare-deadline (the floor
// of a caller who sets a deadline, as gRPC advises), Unary/ours,
// Unary/ours-nohedge, Unary/ours-once and Unary/failsafe.
func BenchmarkUnary(b *testing.B) {
	addr := loopback(b)
	for _, row := range benchRows {
		b.Run(row.name, func(b *testing.B) {
			call := caller(b, addr, row)
			b.ReportAllocs()
			for b.Loop() {
				call()
			}
		})
	}
}

// BenchmarkUnaryInterleaved is BenchmarkUnary for a machine whose speed
// drifts, as a shared one's does: each iteration sends one call through
// every row, in a random order, so that a slow spell slows them all alike,
// and reports each row's median time as <row>-ns/call (ns/op is the time of
// one call through each row). The medians' differences from bare's are the
// time each row adds to a call.
func BenchmarkUnaryInterleaved(b *testing.B) {
	addr := loopback(b)
	calls := make([]func(), len(benchRows))
	for i, row := range benchRows {
		calls[i] = caller(b, addr, row)
	}
	took := make([][]time.Duration, len(benchRows))
	order := make([]int, len(benchRows))
	for i := range order {
		order[i] = i
	}
	rng := rand.New(rand.NewPCG(1, 2))
	b.ReportAllocs()
	for b.Loop() {
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, i := range order {
			start := time.Now()
			calls[i]()
			took[i] = append(took[i], time.Since(start))
		}
	}
	for i, row := range benchRows {
		slices.Sort(took[i])
		b.ReportMetric(float64(took[i][len(took[i])/2]), row.name+"-ns/call")
	}
}

// answer is an invoker that answers at once: under it, an interceptor's time
// is its own.
func answer(_ context.Context, _ string, _, reply any, _ *grpc.ClientConn, _ ...grpc.CallOption) error {
	reply.(*testgrpc.SimpleResponse).Payload = nil
	return nil
}

// interceptorOf returns the unary interceptor a row installs, or nil for
// bare: the last one its options chain.
func interceptorOf(b *testing.B, row benchRow) grpc.UnaryClientInterceptor {
	var found grpc.UnaryClientInterceptor
	switch row.name {
	case "bare", "bare-deadline":
		return nil
	case "failsafe", "failsafe-card":
		return failsafegrpc.NewUnaryClientInterceptor(failsafePolicies(row.name == "failsafe-card")...)
	}
	cfg := pipelinegrpc.Config{}
	switch row.name {
	case "ours-nohedge":
		cfg.Standard.NoHedge = true
	}
	if row.name != "ours-once" {
		cfg.Methods = map[string]pipelinegrpc.Method{unaryMethod: {Idempotent: true}}
	}
	c, err := pipelinegrpc.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	found = c.Unary
	return found
}

// BenchmarkUnaryOverhead is one call of each row's interceptor over an
// invoker that answers at once, on a channel that never connects: what the
// interceptor itself costs a call, in time and allocations. Its rows are
// those of BenchmarkUnary; bare calls the invoker alone, bare-deadline with
// a context.WithTimeout of its own. Ours is installed
// as DialOptions would not be (by hand, so it reads the channel's service
// config on every call, which DialOptions spares it).
func BenchmarkUnaryOverhead(b *testing.B) {
	conn, err := grpc.NewClient("passthrough:///overhead", grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	req, ctx := request("ping"), context.Background()
	for _, row := range benchRows {
		b.Run(row.name, func(b *testing.B) {
			icpt := interceptorOf(b, row)
			reply := new(testgrpc.SimpleResponse)
			call := func() error { return answer(ctx, unaryMethod, req, reply, conn) }
			if row.deadline {
				call = func() error {
					ctx, cancel := context.WithTimeout(ctx, presetTimeout)
					defer cancel()
					return answer(ctx, unaryMethod, req, reply, conn)
				}
			}
			if icpt != nil {
				call = func() error { return icpt(ctx, unaryMethod, req, reply, conn, answer) }
			}
			for range 50 { // our hedge is armed once its estimator holds 20 samples
				if err := call(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			for b.Loop() {
				if err := call(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

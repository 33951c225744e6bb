package pipelinegrpc_test

import (
	"context"
	"errors"
	"math"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/resilience-go/pipeline"
	pipelinegrpc "github.com/resilience-go/pipeline/grpc"
	"github.com/resilience-go/pipeline/health"
	"github.com/resilience-go/pipeline/internal/retryrule"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/breaker"
	"github.com/resilience-go/pipeline/policy/hedge"
	"github.com/resilience-go/pipeline/standard"
)

// failing returns a unary handler that fails every call with code.
func failing(code codes.Code) func(context.Context, int, *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error) {
	return func(context.Context, int, *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error) {
		return nil, status.Error(code, "injected")
	}
}

// noTrip keeps the breaker closed whatever fails, for tests that count
// attempts.
func noTrip(cfg *pipelinegrpc.Config) {
	cfg.Standard.Breaker.ConsecutiveFailures = math.MaxInt
	cfg.Standard.Breaker.Failures.Disabled = true
}

// TestUnavailableStormTripsTheBreakerOfItsTargetOnly sends RPCs to a target
// that answers every one with Unavailable and to one that is healthy,
// through one client: the failing target's breaker opens and refuses what
// follows without sending it, with Unavailable and the pipeline's reason,
// while the healthy target's breaker stays closed. The transition reaches
// the client's OnEvent once.
func TestUnavailableStormTripsTheBreakerOfItsTargetOnly(t *testing.T) {
	down := serve(t, &service{unary: failing(codes.Unavailable)})
	up := serve(t, &service{})
	var mu sync.Mutex
	var transitions []pipeline.Source
	c := newClient(t, clockwork.NewFakeClock(), func(cfg *pipelinegrpc.Config) {
		cfg.OnEvent = func(_ context.Context, src pipeline.Source, e pipeline.Event) {
			if _, ok := e.(breaker.Transition); ok {
				mu.Lock()
				transitions = append(transitions, src)
				mu.Unlock()
			}
		}
	})
	a := down.dial(t, "a", c.DialOptions()...)
	b := up.dial(t, "b", c.DialOptions()...)
	ctx := within(t)

	scopeA, err := c.Scope(pipelinegrpc.Key{Target: "passthrough:///a"})
	require.NoError(t, err)
	for i := 0; scopeA.Breaker.State() != breaker.Open; i++ {
		require.Less(t, i, 20, "the breaker of the failing target never opened")
		_, err := a.UnaryCall(ctx, request("a"))
		require.Equal(t, codes.Unavailable, status.Code(err), "%v", err)
		_, err = b.UnaryCall(ctx, request("b"))
		require.NoError(t, err)
	}

	mu.Lock()
	assert.Equal(t, []pipeline.Source{{Stage: "breaker", Name: "passthrough:///a"}}, transitions,
		"the transition reached Config.OnEvent once, from the target's breaker")
	mu.Unlock()

	sent := down.svc.Calls(unaryMethod)
	for range 10 {
		_, err := a.UnaryCall(ctx, request("a"))
		assert.Equal(t, codes.Unavailable, status.Code(err))
		assert.ErrorIs(t, err, pipeline.DependencyUnavailable)
		stop, ok := errors.AsType[*pipeline.StopError](err)
		require.True(t, ok, "%v", err)
		assert.Equal(t, "passthrough:///a", stop.Name, "the refusal names its target")
	}
	assert.Equal(t, sent, down.svc.Calls(unaryMethod), "the open breaker let RPCs through")

	seen := map[pipelinegrpc.Key]breaker.State{}
	for key, snap := range c.Breakers {
		seen[key] = snap.State
	}
	assert.Equal(t, map[pipelinegrpc.Key]breaker.State{
		{Target: "passthrough:///a"}: breaker.Open,
		{Target: "passthrough:///b"}: breaker.Closed,
	}, seen)

	var deps health.Registry
	deps.Add(c.Health())
	states := map[string]string{}
	for _, d := range deps.Report().Dependencies {
		require.NotNil(t, d.Breaker, d.Name)
		require.NotNil(t, d.Budget, d.Name)
		states[d.Name] = d.Breaker.State
	}
	assert.Equal(t, map[string]string{"passthrough:///a": "open", "passthrough:///b": "closed"}, states,
		"the health view lists every target with its breaker and budget")
}

// TestAMethodWithItsOwnScopeHasItsOwnBreaker gives UnaryCall a scope of its
// own: its failures open its breaker, and the target's other methods,
// sharing the target's scope, go on.
func TestAMethodWithItsOwnScopeHasItsOwnBreaker(t *testing.T) {
	srv := serve(t, &service{unary: failing(codes.Unavailable)})
	var named []pipelinegrpc.Key
	c := newClient(t, clockwork.NewFakeClock(), func(cfg *pipelinegrpc.Config) {
		cfg.Methods[unaryMethod] = pipelinegrpc.Method{Idempotent: true, OwnScope: true}
		cfg.For = func(key pipelinegrpc.Key, shared standard.Config) standard.Config {
			named = append(named, key) // the registry builds one scope at a time per key
			return shared
		}
	})
	client := srv.dial(t, "a", c.DialOptions()...)
	ctx := within(t)
	for range 5 {
		_, err := client.UnaryCall(ctx, request("x"))
		require.Error(t, err)
	}
	own, err := c.Scope(pipelinegrpc.Key{Target: "passthrough:///a", Method: unaryMethod})
	require.NoError(t, err)
	assert.Equal(t, breaker.Open, own.Breaker.State())

	stream, err := client.StreamingOutputCall(ctx, &testgrpc.StreamingOutputCallRequest{Payload: &testgrpc.Payload{Body: []byte("s")}})
	require.NoError(t, err)
	resp, err := stream.Recv()
	require.NoError(t, err, "the target's shared scope is closed")
	assert.Equal(t, "s", string(resp.GetPayload().GetBody()))
	assert.Contains(t, named, pipelinegrpc.Key{Target: "passthrough:///a", Method: unaryMethod})
	assert.Contains(t, named, pipelinegrpc.Key{Target: "passthrough:///a"})
}

// TestPermanentCodesAreSentOnce answers an idempotent method with each code
// that no retry can fix: the call is sent once, and the caller gets the
// server's status as it was sent, message and details included.
func TestPermanentCodesAreSentOnce(t *testing.T) {
	svc := &service{unary: func(_ context.Context, _ int, req *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error) {
		code, _ := strconv.Atoi(string(req.GetPayload().GetBody()))
		st, err := status.New(codes.Code(code), "refused").WithDetails(&testgrpc.Payload{Body: []byte("why")})
		if err != nil {
			return nil, err
		}
		return nil, st.Err()
	}}
	srv := serve(t, svc)
	c := newClient(t, clockwork.NewFakeClock(), noTrip)
	client := srv.dial(t, "a", c.DialOptions()...)
	ctx := within(t)

	for _, code := range []codes.Code{
		codes.InvalidArgument, codes.NotFound, codes.AlreadyExists, codes.PermissionDenied,
		codes.Unauthenticated, codes.FailedPrecondition, codes.OutOfRange, codes.Unimplemented,
		codes.Aborted, codes.DataLoss, codes.Canceled,
	} {
		before := svc.Calls(unaryMethod)
		_, err := client.UnaryCall(ctx, request(strconv.Itoa(int(code))))
		st := status.Convert(err)
		assert.Equal(t, code, st.Code(), "%v", err)
		assert.Equal(t, "refused", st.Message(), "%v", code)
		if assert.Len(t, st.Details(), 1, "%v", code) {
			assert.Equal(t, "why", string(st.Details()[0].(*testgrpc.Payload).GetBody()))
		}
		assert.ErrorIs(t, err, pipeline.Permanent, "%v", code)
		assert.Equal(t, 1, svc.Calls(unaryMethod)-before, "%v was sent again", code)
	}
}

// TestCodesAreConfigurable retries Aborted and stops retrying Internal when
// Config.Codes says so, and lets Config.Classify override both.
func TestCodesAreConfigurable(t *testing.T) {
	for _, tc := range []struct {
		name     string
		code     codes.Code
		adjust   func(*pipelinegrpc.Config)
		attempts int
	}{
		{"Aborted by default", codes.Aborted, nil, 1},
		{"Aborted made Transient", codes.Aborted, func(cfg *pipelinegrpc.Config) {
			cfg.Codes = map[codes.Code]outcome.Kind{codes.Aborted: outcome.Transient}
		}, 3},
		{"Internal by default", codes.Internal, nil, 3},
		{"Internal made Permanent", codes.Internal, func(cfg *pipelinegrpc.Config) {
			cfg.Codes = map[codes.Code]outcome.Kind{codes.Internal: outcome.Permanent}
		}, 1},
		{"a hook wins over the codes", codes.Unavailable, func(cfg *pipelinegrpc.Config) {
			cfg.Classify = func(method string, err error, _ metadata.MD) (outcome.Verdict, bool) {
				return outcome.Verdict{Kind: outcome.Permanent}, method == unaryMethod && err != nil
			}
		}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			svc := &service{unary: failing(tc.code)}
			srv := serve(t, svc)
			c := newClient(t, clockwork.NewFakeClock(), noTrip, func(cfg *pipelinegrpc.Config) {
				if tc.adjust != nil {
					tc.adjust(cfg)
				}
			})
			_, err := srv.dial(t, "a", c.DialOptions()...).UnaryCall(within(t), request("x"))
			assert.Equal(t, tc.code, status.Code(err))
			assert.Equal(t, tc.attempts, svc.Calls(unaryMethod))
		})
	}
}

// TestOnlyIdempotentCallsAreSentAgain answers every call with Unavailable: a
// method not declared idempotent is sent once, unless its context is marked
// with Idempotent or hedge.Repeatable; a declared one is sent three times,
// unless its context is marked with SendOnce.
func TestOnlyIdempotentCallsAreSentAgain(t *testing.T) {
	for _, tc := range []struct {
		name     string
		declared bool
		mark     func(context.Context) context.Context
		attempts int
	}{
		{"not declared", false, nil, 1},
		{"not declared, marked Idempotent", false, pipelinegrpc.Idempotent, 3},
		{"not declared, marked hedge.Repeatable", false, hedge.Repeatable, 3},
		{"declared", true, nil, 3},
		{"declared, marked SendOnce", true, pipelinegrpc.SendOnce, 1},
		{"marked SendOnce then Idempotent", false, func(ctx context.Context) context.Context {
			return pipelinegrpc.Idempotent(pipelinegrpc.SendOnce(ctx))
		}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			svc := &service{unary: failing(codes.Unavailable)}
			srv := serve(t, svc)
			c := newClient(t, clockwork.NewFakeClock(), noTrip, func(cfg *pipelinegrpc.Config) {
				if !tc.declared {
					cfg.Methods = nil
				}
			})
			ctx := within(t)
			if tc.mark != nil {
				ctx = tc.mark(ctx)
			}
			_, err := srv.dial(t, "a", c.DialOptions()...).UnaryCall(ctx, request("x"))
			assert.Equal(t, codes.Unavailable, status.Code(err))
			assert.Equal(t, tc.attempts, svc.Calls(unaryMethod))
		})
	}
}

// TestThrottledWaitsThePushback answers the first attempt with
// ResourceExhausted and a pushback of 250 ms: the retry waits exactly that
// long on the client's clock (not a moment less) before it sends again.
func TestThrottledWaitsThePushback(t *testing.T) {
	svc := &service{unary: func(ctx context.Context, n int, req *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error) {
		if n == 1 {
			_ = grpc.SetTrailer(ctx, metadata.Pairs(pipelinegrpc.PushbackKey, "250"))
			return nil, status.Error(codes.ResourceExhausted, "busy")
		}
		return echo(req), nil
	}}
	srv := serve(t, svc)
	clock := clockwork.NewFakeClock()
	c := newClient(t, clock, func(cfg *pipelinegrpc.Config) { cfg.Standard.Retry.Backoff = nil }) // the default: a hint is used as given
	client := srv.dial(t, "a", c.DialOptions()...)
	ctx := within(t)

	done := make(chan error, 1)
	go func() {
		resp, err := client.UnaryCall(ctx, request("x"))
		if err == nil && string(resp.GetPayload().GetBody()) != "x" {
			err = assert.AnError
		}
		done <- err
	}()
	require.NoError(t, clock.BlockUntilContext(ctx, 1), "the retry never waited")
	clock.Advance(249 * time.Millisecond)
	require.NoError(t, clock.BlockUntilContext(ctx, 1))
	assert.Equal(t, 1, svc.Calls(unaryMethod), "sent again before the pushback was over")
	clock.Advance(time.Millisecond)
	require.NoError(t, wait(t, done, "the retried call"))
	assert.Equal(t, 2, svc.Calls(unaryMethod))
}

// TestAPushbackSayingNoEndsTheRetries answers with Unavailable and a pushback
// that asks the client not to retry (a negative one, or one it cannot
// read): the call is sent once.
func TestAPushbackSayingNoEndsTheRetries(t *testing.T) {
	for _, value := range []string{"-1", "soon"} {
		svc := &service{unary: func(ctx context.Context, _ int, _ *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error) {
			_ = grpc.SetTrailer(ctx, metadata.Pairs(pipelinegrpc.PushbackKey, value))
			return nil, status.Error(codes.Unavailable, "going away")
		}}
		srv := serve(t, svc)
		c := newClient(t, clockwork.NewFakeClock(), noTrip)
		var trailer metadata.MD
		_, err := srv.dial(t, "a", c.DialOptions()...).UnaryCall(within(t), request("x"), grpc.Trailer(&trailer))
		assert.Equal(t, codes.Unavailable, status.Code(err))
		assert.Equal(t, 1, svc.Calls(unaryMethod), "pushback %q", value)
		assert.Equal(t, []string{value}, trailer[pipelinegrpc.PushbackKey], "the caller's trailer option")
	}
}

// TestAHedgedCallCancelsItsLoser arms the hedge (its estimator holds enough
// fast samples) and lets the first copy hang: the hedge sends a second copy,
// which answers; the first copy's RPC is canceled on the server, and the
// caller gets the second copy's reply, header and trailer.
func TestAHedgedCallCancelsItsLoser(t *testing.T) {
	started := make(chan struct{})
	canceled := make(chan error, 1)
	svc := &service{unary: func(ctx context.Context, n int, req *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error) {
		if n == 1 {
			close(started)
			<-ctx.Done()
			canceled <- ctx.Err()
			return nil, status.FromContextError(ctx.Err()).Err()
		}
		_ = grpc.SetHeader(ctx, metadata.Pairs("copy", strconv.Itoa(n)))
		_ = grpc.SetTrailer(ctx, metadata.Pairs("copy", strconv.Itoa(n)))
		return &testgrpc.SimpleResponse{Payload: &testgrpc.Payload{Body: []byte("copy " + strconv.Itoa(n))}}, nil
	}}
	srv := serve(t, svc)
	clock := clockwork.NewFakeClock()
	c := newClient(t, clock, func(cfg *pipelinegrpc.Config) { cfg.Standard.Hedge.MinDelay = time.Millisecond })
	client := srv.dial(t, "a", c.DialOptions()...)
	scope, err := c.Scope(pipelinegrpc.Key{Target: "passthrough:///a"})
	require.NoError(t, err)
	for range 20 { // the hedge is armed once its estimator trusts its estimate
		scope.Estimator.Record(scope.Estimator.Now(), time.Millisecond)
	}
	ctx := within(t)

	type result struct {
		resp            *testgrpc.SimpleResponse
		header, trailer metadata.MD
		err             error
	}
	done := make(chan result, 1)
	go func() {
		var r result
		r.resp, r.err = client.UnaryCall(ctx, request("x"), grpc.Header(&r.header), grpc.Trailer(&r.trailer))
		done <- r
	}()
	wait(t, started, "the first copy")
	require.NoError(t, clock.BlockUntilContext(ctx, 1), "no hedge was armed")
	clock.Advance(time.Second)
	r := wait(t, done, "the hedged call")
	require.NoError(t, r.err)
	assert.Equal(t, "copy 2", string(r.resp.GetPayload().GetBody()))
	assert.Equal(t, []string{"2"}, r.header.Get("copy"))
	assert.Equal(t, []string{"2"}, r.trailer.Get("copy"))
	assert.ErrorIs(t, wait(t, canceled, "the loser's cancellation"), context.Canceled)
	assert.Equal(t, 2, svc.Calls(unaryMethod))
}

// TestLocalErrorsAreNotRetried makes gRPC itself fail the call: a reply
// larger than the caller accepts, a request larger than it may send. Their
// codes (ResourceExhausted) would say "retry"; no retry can fix them, so
// each is tried once.
func TestLocalErrorsAreNotRetried(t *testing.T) {
	big := string(make([]byte, 4096))
	for name, opt := range map[string]grpc.CallOption{
		"reply too large":   grpc.MaxCallRecvMsgSize(1024),
		"request too large": grpc.MaxCallSendMsgSize(1024),
	} {
		t.Run(name, func(t *testing.T) {
			attempts := 0
			c := newClient(t, clockwork.NewFakeClock(), func(cfg *pipelinegrpc.Config) {
				cfg.OnEvent = func(_ context.Context, _ pipeline.Source, e pipeline.Event) {
					if _, ok := e.(pipeline.AttemptFinished); ok {
						attempts++ // one call at a time, on the caller's goroutine
					}
				}
			})
			srv := serve(t, &service{})
			_, err := srv.dial(t, "a", c.DialOptions()...).UnaryCall(within(t), request(big), opt)
			assert.Equal(t, codes.ResourceExhausted, status.Code(err), "%v", err)
			assert.Equal(t, 1, attempts)
		})
	}
}

// TestARefusedRPCReturnsAtOnce isolates a target's breaker and then makes an
// RPC it refuses: with the client's default RefusalPause (none) the refusal
// returns without the client's clock moving; with the preset's 100 ms it
// returns only once that clock has moved by the pause.
func TestARefusedRPCReturnsAtOnce(t *testing.T) {
	for _, pause := range []time.Duration{0, retryrule.DefaultRefusalPause} {
		down := serve(t, &service{unary: failing(codes.Unavailable)})
		clock := clockwork.NewFakeClock()
		c := newClient(t, clock, func(cfg *pipelinegrpc.Config) { cfg.Standard.Retry.RefusalPause = pause })
		a := down.dial(t, "a", c.DialOptions()...)
		ctx := within(t)
		scope, err := c.Scope(pipelinegrpc.Key{Target: "passthrough:///a"})
		require.NoError(t, err)
		scope.Breaker.Isolate() // refuses everything, as an open breaker does
		done := make(chan error, 1)
		go func() {
			_, err := a.UnaryCall(ctx, request("a"))
			done <- err
		}()
		var advanced time.Duration // the client's time the refusal took
		for err = nil; err == nil; {
			select {
			case err = <-done:
			case <-time.After(time.Millisecond):
				if pause > 0 { // with no pause, the refusal returns with the clock standing still
					clock.Advance(10 * time.Millisecond)
					advanced += 10 * time.Millisecond
				}
			}
		}
		assert.ErrorIs(t, err, pipeline.DependencyUnavailable, "pause %v", pause)
		assert.GreaterOrEqual(t, advanced, pause, "the refusal waited its pause on the client's clock")
		assert.NoError(t, ctx.Err(), "the refusal returned before the test's context ended, not at its end")
	}
}

package pipelinegrpc_test

import (
	"context"
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
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/adaptive"
	"github.com/resilience-go/pipeline/policy/bulkhead"
)

// newBulkhead returns a bulkhead of n slots and no queue.
func newBulkhead(t *testing.T, n int) *bulkhead.Bulkhead {
	t.Helper()
	b, err := bulkhead.New(bulkhead.Config{MaxConcurrent: n})
	require.NoError(t, err)
	return b
}

// newShedder returns a shedder of cfg.
func newShedder(t *testing.T, cfg pipelinegrpc.ShedConfig) *pipelinegrpc.Shedder {
	t.Helper()
	s, err := pipelinegrpc.NewShedder(cfg)
	require.NoError(t, err)
	return s
}

// gate is a handler's way to hold its slot: it reports that it entered, and
// returns when the test opens the gate.
type gate struct {
	entered chan struct{}
	open    chan struct{}
}

func newGate(capacity int) *gate {
	return &gate{entered: make(chan struct{}, capacity), open: make(chan struct{})}
}

func (g *gate) pass() {
	g.entered <- struct{}{}
	<-g.open
}

// fixedSource is a rand.Source that always draws v.
type fixedSource uint64

func (s fixedSource) Uint64() uint64 { return uint64(s) }

// pushbackOf returns the pushback in trailer, in milliseconds, or -2 if it
// has none or more than one.
func pushbackOf(trailer metadata.MD) int {
	vs := trailer.Get(pipelinegrpc.PushbackKey)
	if len(vs) != 1 {
		return -2
	}
	ms, err := strconv.Atoi(vs[0])
	if err != nil {
		return -2
	}
	return ms
}

// TestTheLimitHoldsUnderABurst sends a burst of 16 RPCs, from a plain
// client, to a server whose bulkhead takes 4 at once and whose handlers
// hold their slots: exactly 4 run, 12 are refused at once with
// ResourceExhausted and a pushback in [Pushback/2, Pushback], and once the 4
// are done the server takes RPCs again.
func TestTheLimitHoldsUnderABurst(t *testing.T) {
	const limit, burst = 4, 16
	g := newGate(burst)
	b := newBulkhead(t, limit)
	lim := newShedder(t, pipelinegrpc.ShedConfig{Limits: []pipeline.Described{b}, Pushback: 200 * time.Millisecond})
	held := true
	var mu sync.Mutex
	svc := &service{unary: func(_ context.Context, _ int, req *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error) {
		mu.Lock()
		hold := held
		mu.Unlock()
		if hold {
			g.pass()
		}
		return echo(req), nil
	}}
	srv := serve(t, svc, lim.ServerOptions()...)
	client := srv.dial(t, "a")
	ctx := within(t)

	type result struct {
		err     error
		trailer metadata.MD
	}
	results := make(chan result, burst)
	for range burst {
		go func() {
			var r result
			_, r.err = client.UnaryCall(ctx, request("x"), grpc.Trailer(&r.trailer))
			results <- r
		}()
	}
	for range burst - limit {
		r := wait(t, results, "a refusal")
		require.Equal(t, codes.ResourceExhausted, status.Code(r.err), "%v", r.err)
		ms := pushbackOf(r.trailer)
		assert.GreaterOrEqual(t, ms, 100, "pushback")
		assert.LessOrEqual(t, ms, 200, "pushback")
	}
	for range limit {
		wait(t, g.entered, "a handler")
	}
	assert.Equal(t, limit, b.InFlight())
	assert.EqualValues(t, burst-limit, lim.Refused())
	assert.Equal(t, limit, svc.Calls(unaryMethod), "the limit did not hold")

	mu.Lock()
	held = false
	mu.Unlock()
	close(g.open)
	for range limit {
		assert.NoError(t, wait(t, results, "a call let through").err)
	}
	assert.Zero(t, b.InFlight())
	_, err := client.UnaryCall(ctx, request("x"))
	assert.NoError(t, err, "the server takes RPCs again")
}

// TestStreamsAreShed holds the one slot of a server with a stream: the next
// stream is refused with the configured code and pushback in its trailer,
// an exempt method is not, and the slot is free once the first stream's
// handler returns.
func TestStreamsAreShed(t *testing.T) {
	g := newGate(1)
	b := newBulkhead(t, 1)
	cfg := pipelinegrpc.ShedConfig{
		Limits:   []pipeline.Described{b},
		Pushback: time.Second,
		Code:     codes.Unavailable,
		Exempt:   func(method string) bool { return method == unaryMethod },
		Rand:     fixedSource(0),
	}
	lim := newShedder(t, cfg)
	svc := &service{stream: func(n int, _ *testgrpc.StreamingOutputCallRequest, ss grpc.ServerStreamingServer[testgrpc.StreamingOutputCallResponse]) error {
		if n == 1 {
			g.pass()
		}
		return send(ss, "m", 1)
	}}
	srv := serve(t, svc, lim.ServerOptions()...)
	client := srv.dial(t, "a")
	ctx := within(t)

	first, err := client.StreamingOutputCall(ctx, streamRequest("r"))
	require.NoError(t, err)
	wait(t, g.entered, "the first stream's handler")

	second, err := client.StreamingOutputCall(ctx, streamRequest("r"))
	require.NoError(t, err)
	_, err = receive(second)
	assert.Equal(t, codes.Unavailable, status.Code(err))
	assert.Equal(t, 500, pushbackOf(second.Trailer()), "the least pushback, for a source that draws 0")

	_, err = client.UnaryCall(ctx, request("x"))
	assert.NoError(t, err, "an exempt method was refused")

	close(g.open)
	got, err := receive(first)
	assert.NoError(t, err)
	assert.Equal(t, []string{"m0"}, got)
	assert.Zero(t, b.InFlight())
	assert.EqualValues(t, 1, lim.Refused())
}

// TestShedConfig refuses impossible settings, naming each field.
func TestShedConfig(t *testing.T) {
	_, err := pipelinegrpc.NewShedder(pipelinegrpc.ShedConfig{Code: codes.NotFound})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "ShedConfig.Limits is empty")
	assert.Contains(t, err.Error(), "ShedConfig.Code must be ResourceExhausted or Unavailable")
	var nilBulkhead *bulkhead.Bulkhead
	_, err = pipelinegrpc.NewShedder(pipelinegrpc.ShedConfig{Limits: []pipeline.Described{nilBulkhead, notALimit{}}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "ShedConfig.Limits[0]: nil (*bulkhead.Bulkhead)")
	assert.Contains(t, err.Error(), "ShedConfig.Limits[1]: a pipelinegrpc_test.notALimit is neither a limit")
	assert.NoError(t, pipelinegrpc.ShedConfig{Limits: []pipeline.Described{newBulkhead(t, 1)}}.Validate())
}

// TestAPushbackOfNoMeansNoRetry has the limiter ask clients not to retry
// (a negative Pushback): our client sends the refused call once.
func TestAPushbackOfNoMeansNoRetry(t *testing.T) {
	lim := newShedder(t, pipelinegrpc.ShedConfig{Limits: []pipeline.Described{newBulkhead(t, 1)}, Pushback: -1})
	g := newGate(1)
	svc := &service{unary: func(_ context.Context, n int, req *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error) {
		if n == 1 {
			g.pass()
		}
		return echo(req), nil
	}}
	srv := serve(t, svc, lim.ServerOptions()...)
	c := newClient(t, clockwork.NewFakeClock())
	client := srv.dial(t, "a", c.DialOptions()...)
	ctx := within(t)
	done := make(chan error, 1)
	go func() {
		_, err := client.UnaryCall(ctx, request("held"))
		done <- err
	}()
	wait(t, g.entered, "the first call")
	var trailer metadata.MD
	_, err := client.UnaryCall(ctx, request("x"), grpc.Trailer(&trailer))
	assert.Equal(t, codes.ResourceExhausted, status.Code(err))
	assert.Equal(t, -1, pushbackOf(trailer))
	assert.EqualValues(t, 1, lim.Refused(), "the refused call was sent again")
	close(g.open)
	assert.NoError(t, wait(t, done, "the first call"))
}

// TestOurClientHonoursOurServersPushback puts our client before our server:
// a call refused while the server's one slot is held waits the pushback the
// refusal asked for, on the client's clock, and then gets through.
func TestOurClientHonoursOurServersPushback(t *testing.T) {
	lim := newShedder(t, pipelinegrpc.ShedConfig{Limits: []pipeline.Described{newBulkhead(t, 1)}, Pushback: 300 * time.Millisecond, Rand: fixedSource(0)})
	g := newGate(1)
	svc := &service{unary: func(_ context.Context, n int, req *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error) {
		if n == 1 {
			g.pass()
		}
		return echo(req), nil
	}}
	srv := serve(t, svc, lim.ServerOptions()...)
	clock := clockwork.NewFakeClock()
	c := newClient(t, clock, func(cfg *pipelinegrpc.Config) { cfg.Standard.Retry.Backoff = nil })
	client := srv.dial(t, "a", c.DialOptions()...)
	ctx := within(t)

	held := make(chan error, 1)
	go func() {
		_, err := client.UnaryCall(ctx, request("held"))
		held <- err
	}()
	wait(t, g.entered, "the call that holds the slot")

	refused := make(chan error, 1)
	go func() {
		resp, err := client.UnaryCall(ctx, request("later"))
		if err == nil && string(resp.GetPayload().GetBody()) != "later" {
			err = assert.AnError
		}
		refused <- err
	}()
	require.NoError(t, clock.BlockUntilContext(ctx, 1), "the refused call never waited")
	assert.EqualValues(t, 1, lim.Refused())
	close(g.open)
	require.NoError(t, wait(t, held, "the call that held the slot"))
	clock.Advance(149 * time.Millisecond) // the pushback: 150 ms, the least for a source that draws 0
	require.NoError(t, clock.BlockUntilContext(ctx, 1))
	clock.Advance(time.Millisecond)
	require.NoError(t, wait(t, refused, "the refused call"))
	assert.EqualValues(t, 1, lim.Refused())
	assert.Equal(t, 2, svc.Calls(unaryMethod))
}

// hinted is a limit of the test's own that refuses every RPC with a hint.
type hinted time.Duration

func (h hinted) Stage() pipeline.StageInfo { return pipeline.StageInfo{Kind: "hinted"} }

func (h hinted) Execute(context.Context, pipeline.Next[pipelinegrpc.Served]) pipeline.Result[pipelinegrpc.Served] {
	return pipeline.Result[pipelinegrpc.Served]{
		Err:     &pipeline.StopError{Stage: "hinted", Reason: pipeline.DependencyUnavailable, RetryAfter: time.Duration(h)},
		Verdict: outcome.Verdict{Kind: outcome.Throttled, SelfImposed: true},
	}
}

// TestARefusalWithAHintAsksForTheHint refuses with a limit whose refusals
// carry a hint: the pushback is the hint, rounded up to the millisecond,
// not the configured one.
func TestARefusalWithAHintAsksForTheHint(t *testing.T) {
	for hint, want := range map[time.Duration]int{40 * time.Millisecond: 40, 1500 * time.Microsecond: 2} {
		svc := &service{}
		lim := newShedder(t, pipelinegrpc.ShedConfig{Limits: []pipeline.Described{hinted(hint)}, Pushback: time.Hour})
		var trailer metadata.MD
		_, err := serve(t, svc, lim.ServerOptions()...).dial(t, "a").UnaryCall(within(t), request("x"), grpc.Trailer(&trailer))
		assert.Equal(t, codes.ResourceExhausted, status.Code(err))
		assert.Equal(t, want, pushbackOf(trailer), "%v", hint)
		assert.Zero(t, svc.Calls(unaryMethod))
	}
}

// TestAnAdaptiveLimitSheds sheds with an adaptive limit held at one slot:
// while one RPC holds it, the next is refused with ResourceExhausted and a
// pushback.
func TestAnAdaptiveLimitSheds(t *testing.T) {
	limit, err := adaptive.New(adaptive.Config{InitialLimit: 1, MinLimit: 1, MaxLimit: 1, Clock: clockwork.NewFakeClock()})
	require.NoError(t, err)
	g := newGate(1)
	svc := &service{unary: func(_ context.Context, n int, req *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error) {
		if n == 1 {
			g.pass()
		}
		return echo(req), nil
	}}
	lim := newShedder(t, pipelinegrpc.ShedConfig{Limits: []pipeline.Described{limit}})
	client := serve(t, svc, lim.ServerOptions()...).dial(t, "a")
	ctx := within(t)
	done := make(chan error, 1)
	go func() {
		_, err := client.UnaryCall(ctx, request("held"))
		done <- err
	}()
	wait(t, g.entered, "the call that holds the slot")
	var trailer metadata.MD
	_, err = client.UnaryCall(ctx, request("x"), grpc.Trailer(&trailer))
	assert.Equal(t, codes.ResourceExhausted, status.Code(err))
	assert.Positive(t, pushbackOf(trailer))
	assert.Equal(t, 1, svc.Calls(unaryMethod))
	close(g.open)
	assert.NoError(t, wait(t, done, "the call that held the slot"))
}

// notALimit describes itself as a stage but is none that a shedder takes.
type notALimit struct{}

func (notALimit) Stage() pipeline.StageInfo { return pipeline.StageInfo{Kind: "other"} }

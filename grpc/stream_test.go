package pipelinegrpc_test

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"sync/atomic"
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

	pipelinegrpc "github.com/resilience-go/pipeline/grpc"
	"github.com/resilience-go/pipeline/policy/breaker"
)

// streamHandler is a StreamingOutputCall handler.
type streamHandler = func(int, *testgrpc.StreamingOutputCallRequest, grpc.ServerStreamingServer[testgrpc.StreamingOutputCallResponse]) error

// send sends n responses, each with body and its number.
func send(ss grpc.ServerStreamingServer[testgrpc.StreamingOutputCallResponse], body string, n int) error {
	for i := range n {
		if err := ss.Send(&testgrpc.StreamingOutputCallResponse{Payload: &testgrpc.Payload{Body: []byte(body + strconv.Itoa(i))}}); err != nil {
			return err
		}
	}
	return nil
}

// receive reads stream to its end and returns the bodies it got and the
// error it ended with (nil for io.EOF).
func receive(stream grpc.ServerStreamingClient[testgrpc.StreamingOutputCallResponse]) ([]string, error) {
	var got []string
	for {
		resp, err := stream.Recv()
		if err == io.EOF {
			return got, nil
		}
		if err != nil {
			return got, err
		}
		got = append(got, string(resp.GetPayload().GetBody()))
	}
}

// streamRequest is a StreamingOutputCall request whose payload is body.
func streamRequest(body string) *testgrpc.StreamingOutputCallRequest {
	return &testgrpc.StreamingOutputCallRequest{Payload: &testgrpc.Payload{Body: []byte(body)}}
}

// TestAServerStreamIsRetriedUntilItsFirstResponse fails a server stream's
// first attempt before it answers: the client opens it again, sending the
// same request, and the caller reads the second attempt's responses, with
// the trailer it ended with in the caller's option.
func TestAServerStreamIsRetriedUntilItsFirstResponse(t *testing.T) {
	var requests []string
	svc := &service{stream: func(n int, req *testgrpc.StreamingOutputCallRequest, ss grpc.ServerStreamingServer[testgrpc.StreamingOutputCallResponse]) error {
		requests = append(requests, string(req.GetPayload().GetBody())) // calls come one at a time
		if n == 1 {
			return status.Error(codes.Unavailable, "restarting")
		}
		ss.SetTrailer(metadata.Pairs("attempt", strconv.Itoa(n)))
		return send(ss, "m", 3)
	}}
	srv := serve(t, svc)
	c := newClient(t, clockwork.NewFakeClock())
	client := srv.dial(t, "a", c.DialOptions()...)

	var trailer metadata.MD
	stream, err := client.StreamingOutputCall(within(t), streamRequest("r"), grpc.Trailer(&trailer))
	require.NoError(t, err)
	got, err := receive(stream)
	require.NoError(t, err)
	assert.Equal(t, []string{"m0", "m1", "m2"}, got)
	assert.Equal(t, []string{"r", "r"}, requests, "the request was not sent again as it was")
	assert.Equal(t, []string{"2"}, trailer.Get("attempt"))
	assert.Equal(t, []string{"2"}, stream.Trailer().Get("attempt"))
}

// TestAServerStreamIsNotRetriedOnceItAnswered fails a server stream after its
// first response (a message, or a header alone): the caller reads what came,
// then the failure, and the stream is not opened again.
func TestAServerStreamIsNotRetriedOnceItAnswered(t *testing.T) {
	for name, tc := range map[string]struct {
		handler streamHandler
		want    []string
	}{
		"after a message": {func(_ int, _ *testgrpc.StreamingOutputCallRequest, ss grpc.ServerStreamingServer[testgrpc.StreamingOutputCallResponse]) error {
			if err := send(ss, "m", 1); err != nil {
				return err
			}
			return status.Error(codes.Unavailable, "lost")
		}, []string{"m0"}},
		"after a header": {func(_ int, _ *testgrpc.StreamingOutputCallRequest, ss grpc.ServerStreamingServer[testgrpc.StreamingOutputCallResponse]) error {
			if err := ss.SendHeader(metadata.Pairs("ready", "yes")); err != nil {
				return err
			}
			return status.Error(codes.Unavailable, "lost")
		}, nil},
	} {
		t.Run(name, func(t *testing.T) {
			svc := &service{stream: tc.handler}
			srv := serve(t, svc)
			c := newClient(t, clockwork.NewFakeClock())
			stream, err := srv.dial(t, "a", c.DialOptions()...).StreamingOutputCall(within(t), streamRequest("r"))
			require.NoError(t, err)
			got, err := receive(stream)
			assert.Equal(t, tc.want, got)
			assert.Equal(t, codes.Unavailable, status.Code(err), "%v", err)
			assert.Equal(t, 1, svc.Calls(streamMethod))
		})
	}
}

// TestAStreamThatEndsWithoutAnsweringEnds ends a server stream at once with
// OK and no response: the caller reads the end, and it is not sent again.
func TestAStreamThatEndsWithoutAnsweringEnds(t *testing.T) {
	svc := &service{stream: func(int, *testgrpc.StreamingOutputCallRequest, grpc.ServerStreamingServer[testgrpc.StreamingOutputCallResponse]) error {
		return nil
	}}
	srv := serve(t, svc)
	c := newClient(t, clockwork.NewFakeClock())
	stream, err := srv.dial(t, "a", c.DialOptions()...).StreamingOutputCall(within(t), streamRequest("r"))
	require.NoError(t, err)
	header, err := stream.Header()
	assert.NoError(t, err)
	assert.Nil(t, header)
	_, err = stream.Recv()
	assert.Equal(t, io.EOF, err)
	_, err = stream.Recv()
	assert.Equal(t, io.EOF, err, "a stream that ended stays ended")
	assert.Equal(t, 1, svc.Calls(streamMethod))
}

// TestAStreamSentOnceIsOpenedOnce fails a server stream of a method that is
// not idempotent, and a bidirectional stream of one that is: neither is
// opened again, and the caller reads the failure.
func TestAStreamSentOnceIsOpenedOnce(t *testing.T) {
	svc := &service{stream: func(int, *testgrpc.StreamingOutputCallRequest, grpc.ServerStreamingServer[testgrpc.StreamingOutputCallResponse]) error {
		return status.Error(codes.Unavailable, "restarting")
	}}
	srv := serve(t, svc)
	c := newClient(t, clockwork.NewFakeClock(), func(cfg *pipelinegrpc.Config) { cfg.Methods = nil })
	client := srv.dial(t, "a", c.DialOptions()...)
	stream, err := client.StreamingOutputCall(within(t), streamRequest("r"))
	require.NoError(t, err)
	_, err = receive(stream)
	assert.Equal(t, codes.Unavailable, status.Code(err))
	assert.Equal(t, 1, svc.Calls(streamMethod))

	bidi, err := client.FullDuplexCall(pipelinegrpc.Idempotent(within(t)))
	require.NoError(t, err)
	for i := range 3 {
		require.NoError(t, bidi.Send(streamRequest(strconv.Itoa(i))))
		resp, err := bidi.Recv()
		require.NoError(t, err)
		assert.Equal(t, strconv.Itoa(i), string(resp.GetPayload().GetBody()))
	}
	require.NoError(t, bidi.CloseSend())
	_, err = bidi.Recv()
	assert.Equal(t, io.EOF, err)
	assert.Equal(t, 1, svc.Calls(testService+"FullDuplexCall"))
}

// TestAStreamLivesOnTheCallersContext opens streams, one that may be retried
// and one sent once, with an attempt timeout far shorter than the test: the
// server sees the caller's deadline, not the attempt's, so our timeouts
// bound the opening and never the life of a stream.
func TestAStreamLivesOnTheCallersContext(t *testing.T) {
	deadlines := make(chan time.Duration, 2)
	svc := &service{stream: func(_ int, _ *testgrpc.StreamingOutputCallRequest, ss grpc.ServerStreamingServer[testgrpc.StreamingOutputCallResponse]) error {
		d, ok := ss.Context().Deadline()
		if !ok {
			d = time.Time{}
		}
		deadlines <- time.Until(d)
		return send(ss, "m", 1)
	}}
	srv := serve(t, svc)
	c := newClient(t, clockwork.NewFakeClock(), func(cfg *pipelinegrpc.Config) {
		cfg.Standard.AttemptTimeout = 100 * time.Millisecond
		cfg.Standard.Timeout = time.Second
	})
	client := srv.dial(t, "a", c.DialOptions()...)
	for _, mark := range []func(context.Context) context.Context{pipelinegrpc.Idempotent, pipelinegrpc.SendOnce} {
		ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
		stream, err := client.StreamingOutputCall(mark(ctx), streamRequest("r"))
		require.NoError(t, err)
		got, err := receive(stream)
		cancel()
		require.NoError(t, err)
		assert.Equal(t, []string{"m0"}, got)
		left := wait(t, deadlines, "the stream")
		assert.Greater(t, left, 59*time.Minute, "the server saw a deadline of ours, not the caller's")
	}
}

// TestAHedgedStreamCancelsItsLoser arms the hedge (20 streams teach the
// streams' own estimator their latency) and lets the first copy of a server
// stream hang before it answers: the second copy answers, the caller reads
// it, and the first is canceled on the server.
func TestAHedgedStreamCancelsItsLoser(t *testing.T) {
	const warm = 20 // hedgerule.DefaultMinSamples
	started := make(chan struct{})
	canceled := make(chan error, 1)
	svc := &service{stream: func(n int, _ *testgrpc.StreamingOutputCallRequest, ss grpc.ServerStreamingServer[testgrpc.StreamingOutputCallResponse]) error {
		if n == warm+1 {
			close(started)
			<-ss.Context().Done()
			canceled <- ss.Context().Err()
			return ss.Context().Err()
		}
		return send(ss, "copy"+strconv.Itoa(n)+"-", 2)
	}}
	srv := serve(t, svc)
	clock := clockwork.NewFakeClock()
	c := newClient(t, clock, func(cfg *pipelinegrpc.Config) { cfg.Standard.Hedge.MinDelay = time.Millisecond })
	client := srv.dial(t, "a", c.DialOptions()...)
	ctx := within(t)
	for range warm { // the streams' own estimator learns their latency: the hedge is armed
		stream, err := client.StreamingOutputCall(ctx, streamRequest("r"))
		require.NoError(t, err)
		_, err = receive(stream)
		require.NoError(t, err)
	}
	stream, err := client.StreamingOutputCall(ctx, streamRequest("r"))
	require.NoError(t, err)

	type result struct {
		got []string
		err error
	}
	done := make(chan result, 1)
	go func() {
		got, err := receive(stream)
		done <- result{got, err}
	}()
	wait(t, started, "the first copy")
	require.NoError(t, clock.BlockUntilContext(ctx, 1), "no hedge was armed")
	clock.Advance(time.Second)
	r := wait(t, done, "the hedged stream")
	require.NoError(t, r.err)
	assert.Equal(t, []string{"copy22-0", "copy22-1"}, r.got)
	assert.ErrorIs(t, wait(t, canceled, "the loser's cancellation"), context.Canceled)
}

// TestStreamsLeaveTheNormalLatencyToAnswers opens, on one healthy target,
// 60 bidirectional streams and 60 server streams of an idempotent method
// (as clients do when they reconnect their streams), then sends unary calls
// that take 50 ms on the test's clock. A stream sent once is judged by its
// opening and one sent again by its first response: the client's own work,
// and a header a server may send before any work, both of which take no
// time here. Were they timed like answers, they would make the breaker's
// normal latency nothing, every answer would be slow, and the breaker would
// open on a dependency as healthy as ever; and the unary calls' hedge delay
// would be theirs.
func TestStreamsLeaveTheNormalLatencyToAnswers(t *testing.T) {
	clock := clockwork.NewFakeClock()
	svc := &service{unary: func(_ context.Context, _ int, req *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error) {
		clock.Advance(50 * time.Millisecond)
		return echo(req), nil
	}}
	srv := serve(t, svc)
	c := newClient(t, clock)
	client := srv.dial(t, "a", c.DialOptions()...)
	ctx := within(t)
	scope, err := c.Scope(pipelinegrpc.Key{Target: "passthrough:///a"})
	require.NoError(t, err)
	for range 60 {
		bidi, err := client.FullDuplexCall(ctx)
		require.NoError(t, err)
		require.NoError(t, bidi.CloseSend())
		_, err = bidi.Recv()
		require.Equal(t, io.EOF, err)
		stream, err := client.StreamingOutputCall(ctx, streamRequest("s"))
		require.NoError(t, err)
		_, err = receive(stream)
		require.NoError(t, err)
	}
	_, n := scope.Estimator.Quantile(scope.Estimator.Now(), 0.5)
	assert.Zero(t, n, "the unary calls' estimator has learned nothing from the streams")
	for i := range 60 {
		_, err := client.UnaryCall(ctx, request("u"))
		require.NoError(t, err, "call %d", i)
	}
	assert.Equal(t, breaker.Closed, scope.Breaker.State())
	normal, ok := scope.Breaker.NormalLatency()
	require.True(t, ok)
	assert.InDelta(t, float64(50*time.Millisecond), float64(normal), float64(5*time.Millisecond), "%v", normal)
}

// failOpenings is a stream interceptor, chained after ours, whose first n
// openings fail with Unavailable before anything reaches the server, as
// gRPC's own do while a channel reconnects.
func failOpenings(n int32) grpc.StreamClientInterceptor {
	var opened atomic.Int32
	return func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
		if opened.Add(1) <= n {
			return nil, status.Error(codes.Unavailable, "connecting")
		}
		return streamer(ctx, desc, cc, method, opts...)
	}
}

// TestTheOpeningOfAnIdempotentStreamIsRetried opens a bidirectional stream
// whose first two openings fail: declared idempotent, it is opened on the
// third try and works; sent once, the caller gets the first failure. Either
// way the server sees one stream, and nothing is sent twice.
func TestTheOpeningOfAnIdempotentStreamIsRetried(t *testing.T) {
	for _, idempotent := range []bool{true, false} {
		t.Run(fmt.Sprintf("idempotent=%v", idempotent), func(t *testing.T) {
			svc := &service{}
			srv := serve(t, svc)
			c := newClient(t, clockwork.NewFakeClock(), func(cfg *pipelinegrpc.Config) {
				if !idempotent {
					cfg.Methods = nil
				}
			})
			client := srv.dial(t, "a", append(c.DialOptions(), grpc.WithChainStreamInterceptor(failOpenings(2)))...)
			bidi, err := client.FullDuplexCall(within(t))
			if !idempotent {
				assert.Equal(t, codes.Unavailable, status.Code(err), "%v", err)
				assert.Zero(t, svc.Calls(testService+"FullDuplexCall"))
				return
			}
			require.NoError(t, err)
			require.NoError(t, bidi.Send(streamRequest("m")))
			resp, err := bidi.Recv()
			require.NoError(t, err)
			assert.Equal(t, "m", string(resp.GetPayload().GetBody()))
			require.NoError(t, bidi.CloseSend())
			_, err = bidi.Recv()
			assert.Equal(t, io.EOF, err)
			assert.Equal(t, 1, svc.Calls(testService+"FullDuplexCall"))
		})
	}
}

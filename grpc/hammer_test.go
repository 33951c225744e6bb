package pipelinegrpc_test

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/budget"
	pipelinegrpc "github.com/resilience-go/pipeline/grpc"
	"github.com/resilience-go/pipeline/policy/hedge"
	"github.com/resilience-go/pipeline/policy/retry"
)

// fate is what the hammer's server does with a request, named by the first
// word of its payload; the rest of the payload makes every request unique.
type fate string

const (
	fateOK         fate = "ok"         // answers
	fateFlaky      fate = "flaky"      // Unavailable on its first attempt, then answers
	fateBusy       fate = "busy"       // ResourceExhausted with a 1 ms pushback first, then answers
	fateMissing    fate = "missing"    // NotFound
	fateSlow       fate = "slow"       // answers after 3 ms, long enough to be hedged
	fateOnce       fate = "once"       // Unavailable, on a call sent once
	fateImpatient  fate = "impatient"  // holds the call until the caller's 1 ms deadline passes
	fateStream     fate = "stream"     // a server stream of 3 messages
	fateStreamFail fate = "streamfail" // a server stream that fails before answering, once
)

var fates = []fate{fateOK, fateFlaky, fateBusy, fateMissing, fateSlow, fateOnce, fateImpatient, fateStream, fateStreamFail}

// hammerServer plays each request's fate; it remembers the requests it has
// failed once.
type hammerServer struct {
	mu     sync.Mutex
	failed map[string]bool // guarded by mu
}

// first reports whether this is the first attempt of the request body.
func (h *hammerServer) first(body string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.failed[body] {
		return false
	}
	h.failed[body] = true
	return true
}

func (h *hammerServer) unary(ctx context.Context, _ int, req *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error) {
	body := string(req.GetPayload().GetBody())
	switch fate(strings.Fields(body)[0]) {
	case fateFlaky:
		if h.first(body) {
			return nil, status.Error(codes.Unavailable, "flaky")
		}
	case fateBusy:
		if h.first(body) {
			_ = grpc.SetTrailer(ctx, metadata.Pairs(pipelinegrpc.PushbackKey, "1"))
			return nil, status.Error(codes.ResourceExhausted, "busy")
		}
	case fateMissing:
		return nil, status.Error(codes.NotFound, "missing")
	case fateSlow:
		t := time.NewTimer(3 * time.Millisecond) // the dependency's latency, not a wait for anything
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return nil, status.FromContextError(ctx.Err()).Err()
		}
	case fateOnce:
		return nil, status.Error(codes.Unavailable, "once")
	case fateImpatient:
		<-ctx.Done()
		return nil, status.FromContextError(ctx.Err()).Err()
	}
	return echo(req), nil
}

func (h *hammerServer) stream(_ int, req *testgrpc.StreamingOutputCallRequest, ss grpc.ServerStreamingServer[testgrpc.StreamingOutputCallResponse]) error {
	body := string(req.GetPayload().GetBody())
	if fate(strings.Fields(body)[0]) == fateStreamFail && h.first(body) {
		return status.Error(codes.Unavailable, "flaky")
	}
	return send(ss, body+"/", 3)
}

// call sends one request of fate f, numbered n by client c, and checks what
// comes back: every success carries the reply to its own request.
func call(t *testing.T, client testgrpc.TestServiceClient, f fate, c, n int) {
	body := fmt.Sprintf("%s %d-%d", f, c, n)
	ctx, cancel := context.WithTimeout(context.Background(), eventually)
	defer cancel()
	switch f {
	case fateStream, fateStreamFail:
		stream, err := client.StreamingOutputCall(ctx, streamRequest(body))
		if !assert.NoError(t, err, body) {
			return
		}
		got, err := receive(stream)
		assert.NoError(t, err, body)
		assert.Equal(t, []string{body + "/0", body + "/1", body + "/2"}, got, body)
		return
	case fateOnce:
		ctx = pipelinegrpc.SendOnce(ctx)
	case fateImpatient:
		var c2 context.CancelFunc
		ctx, c2 = context.WithTimeout(ctx, time.Millisecond)
		defer c2()
	}
	resp, err := client.UnaryCall(ctx, request(body))
	switch f {
	case fateMissing:
		assert.Equal(t, codes.NotFound, status.Code(err), body)
	case fateOnce:
		assert.Equal(t, codes.Unavailable, status.Code(err), body)
	case fateImpatient:
		assert.Equal(t, codes.DeadlineExceeded, status.Code(err), body)
	default:
		if assert.NoError(t, err, body) {
			assert.Equal(t, body, string(resp.GetPayload().GetBody()), "a reply to another request")
		}
	}
}

// TestHammer runs 32 clients at once through one Client and one channel,
// each sending calls of every fate (successes, retried failures, throttles
// with a pushback, permanent failures, hedged slow calls, calls sent once,
// callers whose deadline passes, server streams retried before their first
// response), under the race detector when it is on. Every call must end as
// its fate says, every success with the reply to its own request; then,
// with the channel and server closed, no goroutine may outlive the calls.
func TestHammer(t *testing.T) {
	const clients, rounds = 32, 6
	before := goleak.IgnoreCurrent()
	var hedges, retries atomic.Int64
	t.Run("calls", func(t *testing.T) {
		h := &hammerServer{failed: map[string]bool{}}
		srv := serve(t, &service{unary: h.unary, stream: h.stream})
		c := newClient(t, nil, noTrip, func(cfg *pipelinegrpc.Config) {
			cfg.Standard.Retry = retry.Config{Backoff: retry.Exponential{Base: 100 * time.Microsecond, ThrottledBase: 100 * time.Microsecond, Max: time.Millisecond}, RefusalPause: -1}
			cfg.Standard.Budget = budget.Config{Capacity: budget.MaxCapacity, RefillPerSecond: budget.MaxCapacity}
			cfg.Standard.Hedge.MinSamples = 5
			cfg.Standard.Hedge.MinDelay = time.Millisecond
			cfg.OnEvent = func(_ context.Context, _ pipeline.Source, e pipeline.Event) {
				switch e.(type) {
				case hedge.Hedged:
					hedges.Add(1)
				case retry.Scheduled:
					retries.Add(1)
				}
			}
		})
		client := srv.dial(t, "hammer", c.DialOptions()...)
		var wg sync.WaitGroup
		for i := range clients {
			wg.Go(func() {
				for n := range rounds {
					for k := range fates {
						call(t, client, fates[(i+k)%len(fates)], i, n)
					}
				}
			})
		}
		wg.Wait()
	})
	// Every flaky, busy and streamfail call needs a second copy, a retry or a
	// hedge (which of the two depends on the machine's timing).
	assert.GreaterOrEqual(t, retries.Load()+hedges.Load(), int64(3*clients*rounds))
	t.Logf("%d retries, %d hedges", retries.Load(), hedges.Load())
	goleak.VerifyNone(t, before)
}

// TestAReplayStreamLeftUnreadLeaksNothing opens retryable streams and
// leaves them: one never read (never opened, so nothing to leak), one read
// once and then canceled by its caller.
func TestAReplayStreamLeftUnreadLeaksNothing(t *testing.T) {
	before := goleak.IgnoreCurrent()
	t.Run("streams", func(t *testing.T) {
		srv := serve(t, &service{})
		c := newClient(t, nil)
		client := srv.dial(t, "a", c.DialOptions()...)
		_, err := client.StreamingOutputCall(context.Background(), streamRequest("never read"))
		require.NoError(t, err)

		ctx, cancel := context.WithCancel(context.Background())
		stream, err := client.StreamingOutputCall(ctx, streamRequest("read once"))
		require.NoError(t, err)
		_, err = stream.Recv()
		require.NoError(t, err)
		cancel()
		_, err = stream.Recv()
		if err != io.EOF { // the one message may have been followed by the end already
			assert.Equal(t, codes.Canceled, status.Code(err))
		}
	})
	goleak.VerifyNone(t, before)
}

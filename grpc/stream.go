package pipelinegrpc

import (
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/internal/keyed"
	"github.com/resilience-go/pipeline/outcome"
)

// Stream is a grpc.StreamClientInterceptor that runs the opening of the
// stream through the pipeline of its scope. A stream lives on the caller's
// context: the pipeline's timeouts bound how long it takes to open (and, for
// a stream that may be retried, to answer), never how long it may run, and
// the deadline gRPC sends the server is the caller's.
//
// A server stream (one request, any number of responses) of an idempotent
// method, or whose context is marked with [Idempotent], is opened when the
// caller first asks for a response (RecvMsg or Header), with the request
// the caller sent; each attempt waits for the server's first response, its
// header, and is retried or hedged until one arrives, never after: a stream
// that failed once it had answered returns its error to the caller. Every
// other stream, client and bidirectional ones included, is opened at once,
// its opening admitted by the breaker and bounded by the attempt timeout,
// and the caller then reads and writes it as gRPC gives it; the opening of
// an idempotent one is tried again if it fails, since nothing has been sent
// on it yet, and nothing is sent again once it is open.
func (c *Client) Stream(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	return c.stream(ctx, desc, cc, method, streamer, opts, false)
}

// streamAlone is Stream on a channel whose own retries DialOptions turned
// off.
func (c *Client) streamAlone(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	return c.stream(ctx, desc, cc, method, streamer, opts, true)
}

func (c *Client) stream(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts []grpc.CallOption, alone bool) (grpc.ClientStream, error) {
	s, replay, watch, err := c.route(ctx, cc, method, alone)
	if err != nil {
		return nil, err
	}
	ctx = c.carry(ctx, cc.Target())
	o := &opener{ctx: ctx, desc: desc, cc: cc, method: method, streamer: streamer, opts: opts, watch: watch, obs: c.obs}
	p := s.opening
	switch {
	case replay && !desc.ClientStreams:
		return newReplayStream(o, s.streams), nil
	case replay: // nothing is sent before the stream opens: its opening may be tried again
		p = s.reopening
	}
	start := c.obs.Start()
	a, err := p.Execute(ctx, o.open)
	c.obs.Done(ctx, start, outcome.Verdict{}, err)
	if err != nil {
		if a != nil {
			a.release()
		}
		return nil, callError(err)
	}
	return &onceStream{ClientStream: a.stream, cancel: a.cancel}, nil
}

// opener opens one stream.
type opener struct {
	ctx      context.Context // the caller's: the context of every stream opened
	desc     *grpc.StreamDesc
	cc       *grpc.ClientConn
	method   string
	streamer grpc.Streamer
	opts     []grpc.CallOption
	watch    bool            // a failed attempt looks again at the channel's retryPolicy
	obs      *keyed.Observer // the client's, told when the stream has opened
}

// open opens a stream on a context of its own, derived from the caller's,
// and canceled if actx, the attempt's, ends before it is open.
func (o *opener) open(actx context.Context) (*attempt, error) {
	return o.attempt(actx, func(cs grpc.ClientStream, a *attempt) error { return nil })
}

// attempt opens a stream and runs then on it, with the stream's context
// canceled if actx ends first. A stream the attempt's context canceled
// fails with actx's own error (DeadlineExceeded for our timeout), whatever
// the stream said.
func (o *opener) attempt(actx context.Context, then func(grpc.ClientStream, *attempt) error) (*attempt, error) {
	sctx, cancel := context.WithCancel(o.ctx)
	a := &attempt{method: o.method, cancel: cancel}
	stop := context.AfterFunc(actx, cancel)
	cs, err := o.streamer(sctx, o.desc, o.cc, o.method, o.opts...)
	if err == nil {
		a.stream = cs
		err = then(cs, a)
	}
	if !stop() {
		err = status.FromContextError(actx.Err()).Err()
	} else if err != nil && status.Code(err) == codes.DeadlineExceeded {
		a.callers = callersDeadline(o.ctx, actx)
	}
	if err != nil {
		a.deferred = o.watch && channelRetries(o.cc, o.method)
		cancel()
	}
	return a, err
}

// onceStream is a stream opened once: it ends the stream's context when the
// stream ends, as gRPC asks of its callers.
type onceStream struct {
	grpc.ClientStream
	cancel context.CancelFunc
}

func (s *onceStream) RecvMsg(m any) error {
	err := s.ClientStream.RecvMsg(m)
	if err != nil {
		s.cancel()
	}
	return err
}

func (s *onceStream) SendMsg(m any) error {
	err := s.ClientStream.SendMsg(m)
	if err != nil && err != io.EOF { // io.EOF: the status is RecvMsg's to tell
		s.cancel()
	}
	return err
}

func (s *onceStream) Header() (metadata.MD, error) {
	md, err := s.ClientStream.Header()
	if err != nil {
		s.cancel()
	}
	return md, err
}

// replayStream is a server stream that may be sent more than once. It holds
// what the caller sends until the caller first asks for a response, then
// runs the pipeline, each attempt opening a stream, sending what the caller
// sent and waiting for the first response; from the attempt that got one
// (the stream committed to) on, it is that stream.
type replayStream struct {
	o *opener
	p *pipeline.Pipeline[*attempt]
	// The caller's header, trailer and peer options, kept from the attempts
	// (whose copies would write them at once) and filled from the stream
	// committed to when it ends.
	wantHeader, wantTrailer *metadata.MD
	wantPeer                *peer.Peer

	mu      sync.Mutex
	sent    []any // guarded by mu until started: what the caller sent
	closed  bool  // guarded by mu until started: the caller called CloseSend
	started bool  // guarded by mu

	done chan struct{} // closed when the pipeline has returned; the fields below are set before
	won  *attempt      // the attempt the stream committed to, or nil
	last *attempt      // if none, the last attempt that ran, or nil
	err  error         // if none, the stream's error

	ended atomic.Bool // the stream committed to has ended and the caller's options are filled
}

// errStreamPanicked is the error of a stream whose pipeline panicked, for the
// goroutines that wait for it.
var errStreamPanicked = status.Error(codes.Internal, "pipelinegrpc: the stream's pipeline panicked")

func newReplayStream(o *opener, p *pipeline.Pipeline[*attempt]) *replayStream {
	r := &replayStream{o: o, p: p, done: make(chan struct{})}
	opts := make([]grpc.CallOption, 0, len(o.opts))
	for _, opt := range o.opts {
		switch opt := opt.(type) {
		case grpc.HeaderCallOption:
			r.wantHeader = opt.HeaderAddr
		case grpc.TrailerCallOption:
			r.wantTrailer = opt.TrailerAddr
		case grpc.PeerCallOption:
			r.wantPeer = opt.PeerAddr
		default:
			opts = append(opts, opt)
		}
	}
	o.opts = opts
	return r
}

// start runs the pipeline, once, and returns the stream's error.
func (r *replayStream) start() error {
	r.mu.Lock()
	if r.started {
		r.mu.Unlock()
		<-r.done
		return r.err
	}
	r.started = true
	r.mu.Unlock()

	defer close(r.done)
	r.err = errStreamPanicked // until the pipeline returns
	begun := r.o.obs.Start()
	a, err := r.p.Execute(r.o.ctx, r.attempt)
	r.o.obs.Done(r.o.ctx, begun, outcome.Verdict{}, err)
	if err == nil {
		r.won, r.err = a, nil
		return nil
	}
	r.last, r.err = a, callError(err)
	if a != nil {
		a.release()
	}
	r.fill(a, nil)
	return r.err
}

// attempt is one attempt at the stream: open it, send what the caller sent,
// and wait for the first response.
func (r *replayStream) attempt(actx context.Context) (*attempt, error) {
	return r.o.attempt(actx, r.replay)
}

// replay sends what the caller sent on cs, and waits for its first response:
// a header, or the end of a stream that has none.
func (r *replayStream) replay(cs grpc.ClientStream, a *attempt) error {
	r.mu.Lock()
	sent, closed := r.sent, r.closed // fixed once started
	r.mu.Unlock()
	for _, m := range sent {
		if err := cs.SendMsg(m); err != nil {
			if err != io.EOF { // io.EOF: the stream ended, and its status follows
				return err
			}
			break
		}
	}
	if closed {
		_ = cs.CloseSend() // always nil in gRPC; a failure shows below
	}
	md, err := cs.Header()
	if err != nil {
		a.trailer = cs.Trailer()
		return err
	}
	if md != nil {
		a.header = md
		return nil
	}
	// No header: the stream ended without one, with its status only.
	err = cs.RecvMsg(new(emptypb.Empty))
	a.trailer = cs.Trailer()
	switch {
	case errors.Is(err, io.EOF):
		a.eof = true
		return nil
	case err == nil: // a message without a header: not gRPC, but an answer
		return nil
	}
	return err
}

// fill fills the caller's header, trailer and peer options from a, the
// attempt the stream ended with, and stream, its stream if it got that far.
func (r *replayStream) fill(a *attempt, stream grpc.ClientStream) {
	if a == nil {
		return
	}
	if r.wantHeader != nil {
		*r.wantHeader = a.header
	}
	if r.wantTrailer != nil {
		if stream != nil {
			*r.wantTrailer = stream.Trailer()
		} else {
			*r.wantTrailer = a.trailer
		}
	}
	if r.wantPeer != nil && stream != nil {
		if p, ok := peer.FromContext(stream.Context()); ok {
			*r.wantPeer = *p
		}
	}
}

// end is called once the stream committed to has ended: it fills the
// caller's options and ends the stream's context.
func (r *replayStream) end() {
	if r.ended.CompareAndSwap(false, true) {
		r.fill(r.won, r.won.stream)
		r.won.cancel()
	}
}

// finished reports whether the pipeline has returned.
func (r *replayStream) finished() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

func (r *replayStream) Header() (metadata.MD, error) {
	if err := r.start(); err != nil {
		return nil, err
	}
	return r.won.header, nil
}

func (r *replayStream) Trailer() metadata.MD {
	switch {
	case !r.finished():
		return nil
	case r.won != nil:
		return r.won.stream.Trailer()
	case r.last != nil:
		return r.last.trailer
	}
	return nil
}

func (r *replayStream) CloseSend() error {
	r.mu.Lock()
	if !r.started {
		r.closed = true
		r.mu.Unlock()
		return nil
	}
	r.mu.Unlock()
	<-r.done
	if r.won != nil {
		return r.won.stream.CloseSend()
	}
	return nil
}

func (r *replayStream) Context() context.Context {
	if r.finished() && r.won != nil {
		return r.won.stream.Context()
	}
	return r.o.ctx
}

func (r *replayStream) SendMsg(m any) error {
	r.mu.Lock()
	if !r.started {
		r.sent = append(r.sent, m)
		r.mu.Unlock()
		return nil
	}
	r.mu.Unlock()
	<-r.done
	if r.won != nil {
		return r.won.stream.SendMsg(m)
	}
	return io.EOF // the stream failed: RecvMsg says how
}

func (r *replayStream) RecvMsg(m any) error {
	if err := r.start(); err != nil {
		return err
	}
	if r.won.eof {
		r.end()
		return io.EOF
	}
	err := r.won.stream.RecvMsg(m)
	if err != nil {
		r.end()
	}
	return err
}

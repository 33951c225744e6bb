package pipelinegrpc

import (
	"context"
	"sync"
	"sync/atomic"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/resilience-go/pipeline/outcome"
)

// Unary is a grpc.UnaryClientInterceptor that runs the RPC through the
// pipeline of its scope; see [Client] for what it retries and hedges and
// what it returns. Installed by hand (grpc.WithChainUnaryInterceptor) on a
// channel whose service config gives the method a retryPolicy, it leaves the
// retries to gRPC and sends the RPC once; [Client.DialOptions] turns gRPC's
// retries off instead.
//
// Each attempt sends the caller's request and options, with the deadline of
// its attempt timeout, which gRPC sends to the server, and the level and
// tenant of the caller's context in its metadata (CriticalityKey,
// TenantKey), unless the caller set those keys itself. The reply the caller
// gets, and its grpc.Header, grpc.Trailer and grpc.Peer options, are those of
// the attempt that the RPC ended with: a hedged copy decodes into a reply of
// its own, copied into the caller's if it wins.
func (c *Client) Unary(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	return c.unary(ctx, method, req, reply, cc, invoker, opts, false)
}

// unaryAlone is Unary on a channel whose own retries DialOptions turned off.
func (c *Client) unaryAlone(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	return c.unary(ctx, method, req, reply, cc, invoker, opts, true)
}

func (c *Client) unary(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts []grpc.CallOption, alone bool) error {
	s, replay, watch, err := c.route(ctx, cc, method, alone)
	if err != nil {
		return err
	}
	ctx = c.carry(ctx, cc.Target())
	p := s.once
	if replay {
		p = s.std.Pipeline
	}
	u := unaryCalls.Get().(*unaryCall)
	u.set(ctx, method, req, reply, cc, invoker, opts)
	u.watch = watch
	start := c.obs.Start()
	a, err := p.Execute(ctx, u.run)
	c.obs.Done(ctx, start, outcome.Verdict{}, err)
	err = u.finish(a, err)
	u.reset()
	unaryCalls.Put(u)
	return err
}

// unaryCall is one unary RPC. Its own attempt decodes into the caller's
// reply; a hedged copy that starts while the own attempt is in use gets an
// attempt of its own (see attempt). Calls are pooled: every copy has
// returned by the time Execute does, so nothing refers to a call once it is
// put back.
type unaryCall struct {
	ctx     context.Context // the caller's
	method  string
	req     any
	cc      *grpc.ClientConn
	invoker grpc.UnaryInvoker
	watch   bool // a failed attempt looks again at the channel's retryPolicy
	// opts are the caller's options less the header, trailer and peer
	// options, whose destinations are below: every attempt captures its own,
	// and the one the call ends with is copied there.
	opts        []grpc.CallOption
	wantHeader  *metadata.MD
	wantTrailer *metadata.MD
	wantPeer    *peer.Peer

	own  attempt
	busy atomic.Bool // own is in use by an attempt the pipeline holds
	run  func(context.Context) (*attempt, error)
	buf  [8]grpc.CallOption // backs opts and own.opts
}

var unaryCalls = sync.Pool{New: func() any {
	u := new(unaryCall)
	u.run = u.attempt
	u.own.busy = &u.busy
	return u
}}

// set readies u for one call.
func (u *unaryCall) set(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts []grpc.CallOption) {
	u.ctx, u.method, u.req, u.cc, u.invoker = ctx, method, req, cc, invoker
	u.opts = u.buf[:0]
	for _, o := range opts {
		switch o := o.(type) {
		case grpc.HeaderCallOption:
			u.wantHeader = o.HeaderAddr
		case grpc.TrailerCallOption:
			u.wantTrailer = o.TrailerAddr
		case grpc.PeerCallOption:
			u.wantPeer = o.PeerAddr
		default:
			u.opts = append(u.opts, o)
		}
	}
	u.own.method, u.own.reply = method, reply
	u.own.opts = u.captures(&u.own, u.opts)
}

// captures returns opts followed by the options that capture a's trailer
// (for the server's pushback) and, if the caller asked for them, its header
// and peer.
func (u *unaryCall) captures(a *attempt, opts []grpc.CallOption) []grpc.CallOption {
	opts = append(opts, grpc.TrailerCallOption{TrailerAddr: &a.trailer})
	if u.wantHeader != nil {
		opts = append(opts, grpc.HeaderCallOption{HeaderAddr: &a.header})
	}
	if u.wantPeer != nil {
		opts = append(opts, grpc.PeerCallOption{PeerAddr: &a.peer})
	}
	return opts
}

// attempt sends the request once, with ctx, the attempt's context.
func (u *unaryCall) attempt(ctx context.Context) (*attempt, error) {
	a := &u.own
	if !u.busy.CompareAndSwap(false, true) { // a hedged copy beside the own attempt
		reply, ok := newMessage(u.own.reply)
		if !ok {
			return nil, outcome.Mark(errNoCopy, outcome.Verdict{Kind: outcome.Transient, SelfImposed: true})
		}
		a = &attempt{method: u.method, reply: reply}
		a.opts = u.captures(a, u.opts[:len(u.opts):len(u.opts)])
	}
	a.header, a.trailer, a.peer, a.callers, a.deferred = nil, nil, peer.Peer{}, false, false
	err := u.invoker(ctx, u.method, u.req, a.reply, u.cc, a.opts...)
	if err != nil {
		if ctx.Err() == nil && status.Code(err) == codes.DeadlineExceeded {
			a.callers = callersDeadline(u.ctx, ctx)
		}
		a.deferred = u.watch && channelRetries(u.cc, u.method)
	}
	return a, err
}

// finish hands the caller what the call ended with: a, its last attempt (nil
// if none ran), and err, the pipeline's error; it returns the call's error.
func (u *unaryCall) finish(a *attempt, err error) error {
	if a != nil {
		if a != &u.own && err == nil {
			copyMessage(u.own.reply, a.reply)
		}
		if u.wantHeader != nil {
			*u.wantHeader = a.header
		}
		if u.wantTrailer != nil {
			*u.wantTrailer = a.trailer
		}
		if u.wantPeer != nil && a.peer.Addr != nil {
			*u.wantPeer = a.peer
		}
	}
	return callError(err)
}

// reset drops everything u refers to, so that a pooled call keeps nothing
// alive.
func (u *unaryCall) reset() {
	clear(u.own.opts) // the part of buf this call used, if it fitted
	u.ctx, u.req, u.cc, u.invoker, u.opts, u.watch = nil, nil, nil, nil, nil, false
	u.wantHeader, u.wantTrailer, u.wantPeer = nil, nil, nil
	u.own.reply, u.own.opts, u.own.header, u.own.trailer, u.own.peer = nil, nil, nil, nil, peer.Peer{}
	u.busy.Store(false)
}

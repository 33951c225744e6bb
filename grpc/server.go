package pipelinegrpc

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/criticality"
	"github.com/resilience-go/pipeline/internal/limit"
	"github.com/resilience-go/pipeline/internal/nilness"
)

// defaultPushback is the longest pause a refusal that carries no hint of its
// own (a bulkhead's) asks the client for: 100 ms, a few times the latency of
// a typical RPC, so that slots taken when the refusal was made have freed up.
// Each such refusal asks for a pause drawn from [Pushback/2, Pushback]
// (ShedConfig.Pushback; 50 to 100 ms by default), so that the clients
// refused by one burst do not all come back at once. (HTTP's shed answers
// 1 s, the least a Retry-After can say; gRPC's pushback counts
// milliseconds.)
const defaultPushback = 100 * time.Millisecond

// Served is the result type of the pipeline a [Shedder] runs each RPC
// through: nothing, since the handler answers the RPC itself. Stages of your
// own given to ShedConfig.Limits are pipeline.Policy[Served].
type Served = struct{}

// ShedConfig configures a [Shedder]. Only Limits is required; the zero value
// of every other field means its default. Settings that cannot work are
// refused by [ShedConfig.Validate] and [NewShedder], each named with its
// value.
type ShedConfig struct {
	// Name names the shedder's pipeline: the Pipeline of its events' Source.
	// Empty means unnamed.
	Name string
	// Limits guard every RPC, outermost first: each is a *bulkhead.Bulkhead
	// (a fixed concurrency limit), an *adaptive.Limiter (one that finds the
	// server's capacity from its handlers' latency), a *ratelimit.Limiter,
	// or a pipeline.Policy[Served] of your own. A stream holds what it took
	// until its handler returns. At least one, none nil.
	Limits []pipeline.Described
	// Code is the status of a refusal: codes.ResourceExhausted, the default
	// (0, codes.OK, means it), which a client of this package and gRPC's own
	// retries take for a server defending itself, not failing; or
	// codes.Unavailable, which gRPC clients retry by default and count
	// against the server. Any other code is refused.
	Code codes.Code
	// Pushback is the longest pause a refusal with no hint of its own asks
	// for, in the grpc-retry-pushback-ms trailer (gRFC A6); each asks for
	// one drawn uniformly from [Pushback/2, Pushback], to the millisecond. A
	// refusal with a hint (an adaptive limit's median latency, a rate limit's
	// next token) asks for the hint. Zero means 100 ms;
	// negative asks clients not to retry at all (the trailer is -1).
	Pushback time.Duration
	// Exempt, if not nil, names the methods (full names,
	// "/pkg.Service/Method") that no limit sees: health checks, say, which a
	// load balancer must see answered while the server is busy. It must be
	// safe for concurrent use.
	Exempt func(method string) bool
	// OnEvent receives the events of the limits, as a pipeline's
	// Options.OnEvent does. Nil means none.
	OnEvent func(context.Context, pipeline.Source, pipeline.Event)
	// Rand is the random source of the pushbacks' spread. Nil means
	// math/rand/v2's global generator; another must be safe for concurrent
	// use.
	Rand rand.Source
	// Criticality decides the level each RPC is served at, from the one its
	// caller claims in CriticalityKey: claimed, with ok false when it
	// claims none or sends a value that is not a level. It gets the RPC's
	// context (for its peer and credentials: peer.FromContext) and full
	// method name, and returns the level to serve the RPC at, or 0 for none
	// (it is then served as criticality.Default). It is called for every
	// RPC whose context has no level yet, Exempt ones included, before the
	// limits run, so that they and the handler see its answer
	// (criticality.From(ctx)); it must be quick and safe for concurrent
	// use. Nil trusts the metadata: a caller that claims a level gets it.
	// Cap what callers you do not trust may claim, trusting the peers of
	// your mesh:
	//
	//	Criticality: func(ctx context.Context, method string, claimed criticality.Level, ok bool) criticality.Level {
	//		if meshPeer(ctx) { // say, the peer's certificate names one of your services
	//			return claimed
	//		}
	//		return min(claimed, criticality.Default)
	//	},
	//
	// The tenant in TenantKey is read as it is (its first
	// criticality.MaxTenant bytes, if they are printable ASCII), unless the
	// RPC's context has a tenant already: set it from the caller's identity
	// in an interceptor chained before this one to keep callers from naming
	// it. A bulkhead or an adaptive limit of Limits bounds each tenant when
	// built with a TenantShare (bulkhead.Config.TenantShare).
	Criticality func(ctx context.Context, method string, claimed criticality.Level, ok bool) criticality.Level
}

// Shedder is a server interceptor, unary and stream, that protects a server
// from more work than it can do: it runs each RPC through its limits and
// answers the RPCs they refuse itself, before the handler runs, with
// ResourceExhausted (or Unavailable) and a grpc-retry-pushback-ms trailer
// that tells the client when to come back. An RPC given up because its own
// context ended while it waited in a limit's queue gets DeadlineExceeded or
// Canceled, without a pushback. Install it with [Shedder.ServerOptions], or
// chain [Shedder.Unary] and [Shedder.Stream] first among the server's
// interceptors, so that a refused RPC costs nothing else.
//
// The limits see each RPC as one call whose latency is its handler's running
// time and whose outcome is a success whatever the handler returns, as
// package shed's do for HTTP. A panic of the handler goes on up to gRPC
// after the limits have given back its slot.
//
// A Shedder is immutable and safe for concurrent use; build one with
// [NewShedder].
type Shedder struct {
	p        *pipeline.Pipeline[Served]
	code     codes.Code
	pushback time.Duration
	exempt   func(string) bool
	decide   func(context.Context, string, criticality.Level, bool) criticality.Level // ShedConfig.Criticality
	rand     rand.Source
	refused  atomic.Uint64
	unaries  sync.Pool // of *unaryServe
	streams  sync.Pool // of *streamServe
}

// Validate reports every setting of c that cannot work, each naming its
// field and value, joined into one error; nil for a usable ShedConfig.
func (c ShedConfig) Validate() error {
	_, err := c.stages()
	return err
}

// stages returns the stages of c's limits, or an error naming every setting
// of c that cannot work.
func (c ShedConfig) stages() ([]pipeline.Policy[Served], error) {
	var errs []error
	if len(c.Limits) == 0 {
		errs = append(errs, errors.New("pipelinegrpc: ShedConfig.Limits is empty: give at least one limit"))
	}
	if c.Code != codes.OK && c.Code != codes.ResourceExhausted && c.Code != codes.Unavailable {
		errs = append(errs, fmt.Errorf("pipelinegrpc: ShedConfig.Code must be ResourceExhausted or Unavailable (0 means ResourceExhausted), got %v", c.Code))
	}
	stages := make([]pipeline.Policy[Served], len(c.Limits))
	for i, l := range c.Limits {
		s, err := limitStage(l)
		if err != nil {
			errs = append(errs, fmt.Errorf("pipelinegrpc: ShedConfig.Limits[%d]: %w", i, err))
		}
		stages[i] = s
	}
	return stages, errors.Join(errs...)
}

// NewShedder returns a shedder configured by cfg, or an error naming every
// setting of cfg that cannot work.
func NewShedder(cfg ShedConfig) (*Shedder, error) {
	stages, err := cfg.stages()
	if err != nil {
		return nil, err
	}
	s := &Shedder{
		p:        pipeline.New(stages...).With(pipeline.Options[Served]{Name: cfg.Name, OnEvent: cfg.OnEvent}),
		code:     cfg.Code,
		pushback: cfg.Pushback,
		exempt:   cfg.Exempt,
		decide:   cfg.Criticality,
		rand:     cfg.Rand,
	}
	if s.code == codes.OK {
		s.code = codes.ResourceExhausted
	}
	if s.pushback == 0 {
		s.pushback = defaultPushback
	}
	if s.rand == nil {
		s.rand = globalSource{}
	}
	s.unaries.New = func() any { u := new(unaryServe); u.run = u.serve; return u }
	s.streams.New = func() any { u := new(streamServe); u.run = u.serve; return u }
	return s, nil
}

// limitStage makes the stage l stands for.
func limitStage(l pipeline.Described) (pipeline.Policy[Served], error) {
	if nilness.Of(l) {
		return nil, fmt.Errorf("nil (%T)", l)
	}
	if p, ok := limit.Stage[Served](l); ok {
		return p, nil
	}
	if p, ok := l.(pipeline.Policy[Served]); ok {
		return p, nil
	}
	return nil, fmt.Errorf("a %T is neither a limit (%s) nor a pipeline.Policy[pipelinegrpc.Served]", l, limit.Names)
}

// ServerOptions returns the options that install s on a server: its unary
// and stream interceptors, chained before the server's others. Pass them to
// grpc.NewServer.
func (s *Shedder) ServerOptions() []grpc.ServerOption {
	return []grpc.ServerOption{grpc.ChainUnaryInterceptor(s.Unary), grpc.ChainStreamInterceptor(s.Stream)}
}

// Refused returns the number of RPCs refused so far.
func (s *Shedder) Refused() uint64 { return s.refused.Load() }

// unaryServe is one unary RPC on its way through the limits. They are
// pooled, with their run function, so that serving an RPC allocates
// nothing of the shedder's own.
type unaryServe struct {
	handler grpc.UnaryHandler
	req     any
	resp    any
	err     error
	run     pipeline.Func[Served] // serve, bound once
}

func (u *unaryServe) serve(ctx context.Context) (Served, error) {
	u.resp, u.err = u.handler(ctx, u.req)
	return Served{}, nil // the handler's error is the client's answer, not the limits' business
}

// Unary is a grpc.UnaryServerInterceptor that runs the handler once the
// limits admit the RPC, and refuses it otherwise. The limits and the
// handler see the RPC's context with the criticality its caller sent (see
// ShedConfig.Criticality).
func (s *Shedder) Unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	ctx = claim(ctx, info.FullMethod, s.decide)
	if s.exempt != nil && s.exempt(info.FullMethod) {
		return handler(ctx, req)
	}
	u := s.unaries.Get().(*unaryServe)
	u.handler, u.req = handler, req
	_, err := s.p.Execute(ctx, u.run)
	resp, herr := u.resp, u.err
	u.handler, u.req, u.resp, u.err = nil, nil, nil, nil
	s.unaries.Put(u)
	if err == nil {
		return resp, herr
	}
	md, err := s.refusal(err)
	if md != nil {
		_ = grpc.SetTrailer(ctx, md) // fails only outside a gRPC server, where nobody reads it
	}
	return nil, err
}

// streamServe is one stream on its way through the limits.
type streamServe struct {
	handler grpc.StreamHandler
	srv     any
	ss      grpc.ServerStream
	err     error
	run     pipeline.Func[Served] // serve, bound once
}

func (u *streamServe) serve(ctx context.Context) (Served, error) {
	ss := u.ss
	if ctx != ss.Context() {
		ss = &contextStream{ServerStream: ss, ctx: ctx}
	}
	u.err = u.handler(u.srv, ss)
	return Served{}, nil
}

// contextStream is a server stream with the context the limits handed on.
type contextStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *contextStream) Context() context.Context { return s.ctx }

// Stream is a grpc.StreamServerInterceptor that runs the handler once the
// limits admit the stream, holding what it took until the handler returns,
// and refuses it otherwise. The limits and the handler see the stream's
// context with the criticality its caller sent (see
// ShedConfig.Criticality).
func (s *Shedder) Stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	if ctx := claim(ss.Context(), info.FullMethod, s.decide); ctx != ss.Context() {
		ss = &contextStream{ServerStream: ss, ctx: ctx}
	}
	if s.exempt != nil && s.exempt(info.FullMethod) {
		return handler(srv, ss)
	}
	u := s.streams.Get().(*streamServe)
	u.handler, u.srv, u.ss = handler, srv, ss
	_, err := s.p.Execute(ss.Context(), u.run)
	herr := u.err
	u.handler, u.srv, u.ss, u.err = nil, nil, nil, nil
	s.streams.Put(u)
	if err == nil {
		return herr
	}
	md, err := s.refusal(err)
	if md != nil {
		ss.SetTrailer(md)
	}
	return err
}

// refusal returns the trailer (nil for none) and the error of an RPC the
// limits did not admit, given the pipeline's error.
func (s *Shedder) refusal(err error) (metadata.MD, error) {
	stop, ok := errors.AsType[*pipeline.StopError](err)
	if !ok { // a stage of the caller's returned its own error
		return nil, err
	}
	if stop.Reason == pipeline.Canceled || stop.Reason == pipeline.Deadline {
		code := codes.Canceled
		if stop.Reason == pipeline.Deadline {
			code = codes.DeadlineExceeded
		}
		return nil, status.Error(code, stop.Error()) // the client gave up while the RPC queued
	}
	s.refused.Add(1)
	ms := s.pushbackMillis(stop.RetryAfter)
	return metadata.MD{PushbackKey: []string{strconv.FormatInt(ms, 10)}}, status.Error(s.code, "pipelinegrpc: server busy: "+stop.Error())
}

// pushbackMillis is the pushback of a refusal whose hint is hint (0 for
// none): the hint, rounded up to the millisecond, or one drawn from
// [Pushback/2, Pushback], or -1 for a negative Pushback.
func (s *Shedder) pushbackMillis(hint time.Duration) int64 {
	switch {
	case hint > 0:
		return int64((hint + time.Millisecond - 1) / time.Millisecond)
	case s.pushback < 0:
		return -1
	}
	most := max(s.pushback.Milliseconds(), 1)
	least := max(most/2, 1)
	return least + int64(s.rand.Uint64()%uint64(most-least+1))
}

// globalSource is math/rand/v2's global generator as a rand.Source.
type globalSource struct{}

func (globalSource) Uint64() uint64 { return rand.Uint64() }

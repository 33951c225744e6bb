package pipelinegrpc

import (
	"context"
	"fmt"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/budget"
	"github.com/resilience-go/pipeline/health"
	"github.com/resilience-go/pipeline/internal/keyed"
	"github.com/resilience-go/pipeline/latency"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/breaker"
	"github.com/resilience-go/pipeline/policy/timeout"
	"github.com/resilience-go/pipeline/standard"
)

// Client runs every RPC of the channels it is installed on through the
// standard pipeline of its scope (see package standard): a whole-call
// timeout, retries paid from a retry budget, a circuit breaker, a hedge and a
// per-attempt timeout, with a breaker, budget and latency estimator per
// [Key]: per target, and per method for the methods given a scope of their
// own. Install it with [Client.DialOptions], or chain [Client.Unary] and
// [Client.Stream] yourself:
//
//	conn, err := grpc.NewClient(target, append(c.DialOptions(), creds)...)
//
// # What is sent twice
//
// Only idempotent RPCs are retried and hedged: methods declared so in
// Config.Methods, and RPCs whose context is marked with [Idempotent] (or
// hedge.Repeatable). Every other RPC is sent once, through a pipeline that
// shares its scope's breaker and budget: the breaker may refuse it, and its
// outcome is evidence. A server stream of an idempotent method is retried or
// hedged until its first response (its header) arrives, never after; client
// and bidirectional streams are sent once, though the opening of an
// idempotent one is tried again if it fails. See docs/grpc.md.
//
// # Outcomes
//
// An attempt is judged by its status code (Unavailable Transient,
// ResourceExhausted Throttled with the server's pushback as the hint, the
// caller-error codes Permanent, and so on: the table is in docs/grpc.md), the
// caller's own cancellation or deadline is never the server's fault, and
// Config.Codes and Config.Classify override any of it.
//
// # Errors
//
// An RPC the pipeline stops returns an error whose status (status.Code,
// status.FromError) is what gRPC would report: the last attempt's own status
// as the server sent it, DeadlineExceeded or Canceled when a deadline passed
// or the caller canceled, and Unavailable when the breaker refused it; its
// text is the *pipeline.StopError's, which errors.AsType finds, and
// errors.Is(err, pipeline.DependencyUnavailable) and friends match it.
//
// A Client is safe for concurrent use and may serve any number of channels.
// Build one with [New], once, and share it.
type Client struct {
	cfg          Config // for building each scope's state
	methods      map[string]Method
	kinds        kinds
	userClassify func(method string, err error, trailer metadata.MD) (outcome.Verdict, bool)
	scopes       *keyed.Set[Key, *scope, *attempt]
	obs          *keyed.Observer // Config.Observer's; nil for none
}

// scope is the state of one Key: its standard pipeline, for idempotent
// calls, and a pipeline that shares its breaker for the calls sent once.
type scope struct {
	// std is the scope's standard pipeline: timeout -> retry -> breaker ->
	// hedge -> attempt timeout.
	std *standard.Pipeline[*attempt]
	// once carries every call sent once: breaker -> attempt timeout (a whole-call
	// timeout around one attempt would only cost its context).
	once *pipeline.Pipeline[*attempt]
	// opening is once for a stream sent once, judged by its opening: the
	// client's own work, whose duration the breaker does not take as a sample
	// of the dependency's latency (breaker.GuardUntimed).
	opening *pipeline.Pipeline[*attempt]
	// reopening is opening for the client and bidirectional streams of an
	// idempotent method, whose opening may be tried again: std's stages less
	// the hedge, on its breaker and budget, the breaker recording verdicts
	// only (standard.NewUntimed).
	reopening *pipeline.Pipeline[*attempt]
	// streams carries the server streams sent more than once: std's stages
	// on its breaker and budget, the breaker recording verdicts only and the
	// hedge reading an estimator of its own (standard.NewUntimed). A
	// stream's first response (its header, which a server may send before
	// any work) says nothing of how long the target's unary calls take, and
	// must set neither their normal latency nor their hedge's delay.
	streams *pipeline.Pipeline[*attempt]
}

// preset returns the key's standard pipeline, for the set's health and
// breaker listings.
func (s *scope) preset() *standard.Pipeline[*attempt] { return s.std }

// New returns a client configured by cfg, or an error naming every setting of
// cfg that cannot work.
func New(cfg Config) (*Client, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Standard.Retry.RefusalPause == 0 {
		cfg.Standard.Retry.RefusalPause = -1 // a refused RPC returns at once: see Config.Standard
	}
	c := &Client{cfg: cfg, kinds: kindsOf(cfg.Codes), userClassify: cfg.Classify}
	c.obs = keyed.Observe(cfg.Observer, family, cfg.Clock)
	c.cfg.OnEvent = c.obs.Hook(cfg.OnEvent)
	if len(cfg.Methods) > 0 {
		c.methods = make(map[string]Method, len(cfg.Methods))
		for name, m := range cfg.Methods {
			c.methods[name] = m
		}
	}
	c.cfg.Methods, c.cfg.Codes = nil, nil // copied above; the caller's maps are not kept
	scopes, err := keyed.NewSet(keyed.SetConfig[Key, *scope, *attempt]{
		Build: c.build, Standard: (*scope).preset,
		MaxKeys: cfg.MaxScopes, IdleAfter: cfg.IdleAfter, Clock: cfg.Clock, Observer: c.obs,
	})
	if err != nil {
		return nil, err
	}
	c.scopes = scopes
	return c, nil
}

// family names the client's scopes together, for its Observer.
const family = "grpc"

// build builds the state of key, on its first RPC.
func (c *Client) build(key Key) (*scope, error) {
	cfg, err := c.cfg.scopeConfig(key)
	if err != nil {
		return nil, err
	}
	std, err := standard.New[*attempt](cfg)
	if err != nil {
		return nil, fmt.Errorf("pipelinegrpc: the pipeline of %s: %w", key, err)
	}
	opts := pipeline.Options[*attempt]{
		Name:       cfg.Name,
		Classifier: c.classify,
		OnEvent:    c.cfg.OnEvent,
		Clock:      c.cfg.Clock,
		Release:    (*attempt).release,
		Describe:   (*attempt).describe,
	}
	std = std.With(opts)
	_, perAttempt := cfg.Timeouts()
	each := timeout.Config{Name: cfg.Name, Timeout: perAttempt}
	once, err := standard.Compose[*attempt](std.Breaker, each)
	if err != nil {
		return nil, fmt.Errorf("pipelinegrpc: the pipeline of %s: %w", key, err)
	}
	opening, err := standard.Compose[*attempt](breaker.GuardUntimed[*attempt](std.Breaker), each)
	if err != nil {
		return nil, fmt.Errorf("pipelinegrpc: the pipeline of %s: %w", key, err)
	}
	streams, err := standard.NewUntimed(cfg, std)
	if err != nil {
		return nil, fmt.Errorf("pipelinegrpc: the pipeline of %s: %w", key, err)
	}
	openings := cfg
	openings.NoHedge = true // an opening is not worth a second copy: it is quick, or it fails
	reopening, err := standard.NewUntimed(openings, std)
	if err != nil {
		return nil, fmt.Errorf("pipelinegrpc: the pipeline of %s: %w", key, err)
	}
	return &scope{
		std: std, once: once.With(opts), opening: opening.With(opts),
		reopening: reopening.With(opts).Pipeline, streams: streams.With(opts).Pipeline,
	}, nil
}

// DialOptions returns the options that install c on a channel: its unary
// and stream interceptors, and grpc.WithDisableRetry, which turns gRPC's own
// retries (a retryPolicy in the channel's service config) off, so that an
// RPC's attempts are counted, paced and paid for in one place. gRPC's
// transparent retry of an RPC that never left the client stays on. Pass
// them to grpc.NewClient with the channel's other options.
func (c *Client) DialOptions() []grpc.DialOption {
	return []grpc.DialOption{
		grpc.WithDisableRetry(),
		grpc.WithChainUnaryInterceptor(c.unaryAlone),
		grpc.WithChainStreamInterceptor(c.streamAlone),
	}
}

// method returns how name is declared: its own entry in Config.Methods, else
// its service's, else the zero Method.
func (c *Client) method(name string) Method {
	if c.methods == nil {
		return Method{}
	}
	if m, ok := c.methods[name]; ok {
		return m
	}
	if i := strings.LastIndexByte(name, '/'); i > 0 {
		if m, ok := c.methods[name[:i+1]]; ok {
			return m
		}
	}
	return Method{}
}

// route returns the scope of an RPC to method on cc, whether the RPC may be
// sent more than once by us (it is idempotent), and whether its failed
// attempts must look again at the channel's service config (watch).
//
// gRPC's own retries and ours would multiply. Installed with DialOptions
// (alone), the client has turned gRPC's off. Installed by hand, it leaves an
// RPC to gRPC's retries, and sends it once, when the channel's service config
// gives the method a retryPolicy; a channel that has not resolved its target
// yet knows no service config, so a failed attempt of such an RPC looks again
// (see attempt.deferred): a retry only ever follows an attempt, and gRPC has
// resolved by the time an attempt returns.
func (c *Client) route(ctx context.Context, cc *grpc.ClientConn, method string, alone bool) (s *scope, replay, watch bool, err error) {
	m := c.method(method)
	key := Key{Target: cc.Target()}
	if m.OwnScope {
		key.Method = method
	}
	s, err = c.scopes.Get(key)
	if err != nil {
		return nil, false, false, configError(err)
	}
	replay = replayable(ctx, m)
	if replay && !alone {
		if channelRetries(cc, method) {
			return s, false, false, nil
		}
		watch = true
	}
	return s, replay, watch, nil
}

// channelRetries reports whether the service config cc has applied gives
// method a retryPolicy, which gRPC applies unless the channel was built with
// grpc.WithDisableRetry.
func channelRetries(cc *grpc.ClientConn, method string) bool {
	return cc.GetMethodConfig(method).RetryPolicy != nil
}

// Scope is the state the pipelines of one Key share, for health checks and
// tests: read the breaker's Snapshot, Isolate it to stop sending to a target,
// read the budget's Tokens or the estimator's Quantile.
type Scope struct {
	Breaker *breaker.Breaker
	Budget  *budget.Budget
	// Estimator is the latency estimator of the key's unary calls, which
	// sets their hedge's delay; server streams sent more than once keep one
	// of their own.
	Estimator *latency.Estimator
}

// Scope returns the state of key, building it if the client holds none for
// it, which then counts as a use.
func (c *Client) Scope(key Key) (Scope, error) {
	s, err := c.scopes.Get(key)
	if err != nil {
		return Scope{}, err
	}
	return Scope{Breaker: s.std.Breaker, Budget: s.std.Budget, Estimator: s.std.Estimator}, nil
}

// Breakers calls f for every scope the client holds, with a snapshot of its
// breaker, most recently used first, until f returns false: for key, snap :=
// range c.Breakers. It is read-only, for health endpoints: it changes no
// breaker and keeps no scope from going idle.
func (c *Client) Breakers(f func(Key, breaker.Snapshot) bool) {
	c.scopes.Breakers(f)
}

// Health is the source of a health view (package health) that lists every
// scope the client holds state for at each report, under its key's name
// (Key.String), with its breaker, budget and latency estimator:
// registry.Add(client.Health()). Reading it changes nothing and keeps no
// scope from going idle.
func (c *Client) Health() health.Source {
	return c.scopes.Health()
}

// Len returns the number of scopes the client holds state for, at most
// Config.MaxScopes.
func (c *Client) Len() int { return c.scopes.Len() }

package pipelinehttp

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/health"
	"github.com/resilience-go/pipeline/internal/callctx"
	"github.com/resilience-go/pipeline/internal/clock"
	"github.com/resilience-go/pipeline/internal/keyed"
	"github.com/resilience-go/pipeline/latency"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/breaker"
	"github.com/resilience-go/pipeline/policy/timeout"
	"github.com/resilience-go/pipeline/standard"
)

// Transport is an http.RoundTripper that sends every request through the
// standard pipeline of its host (see package standard): a whole-call
// timeout, retries paid from a retry budget, a circuit breaker, a hedge and a
// per-attempt timeout, with a breaker, budget and latency estimator per
// [Host], built on the host's first request and evicted when idle. Put it in
// an http.Client:
//
//	client := &http.Client{Transport: pipelinehttp.NewTransport(nil)}
//
// # What is sent twice
//
// A request is replayable, as net/http itself judges it, when its method is
// GET, HEAD, OPTIONS or TRACE or it carries an Idempotency-Key (or
// X-Idempotency-Key) header, and its body can be sent again (it has none, or
// a GetBody). [Replayable] and [SendOnce] on the request's context replace the
// method and header rule. A replayable request is retried after a Transient
// or Throttled outcome and hedged when slow. Any other request is never
// hedged and is sent again only after an error that proves it never reached
// the server (a dial error, a stream the server refused); a request whose
// body cannot be rewound is never sent again. Its failures still count
// against the host's breaker. Each attempt sends its own copy of the request
// with a fresh body from GetBody; the caller's request is never modified.
//
// CONNECT requests and protocol upgrades (a WebSocket) go straight to the
// base transport: their connection outlives the call.
//
// # Criticality
//
// A request whose context has a criticality level (criticality.With) carries
// it to the server in [CriticalityHeader], and its tenant
// (criticality.WithTenant) in [TenantHeader], where package shed reads them;
// a request without a level sends no header, so that the server's default
// applies. A header the caller set itself is sent as it is. So a server that
// reads the level into its request's context and calls on with that context
// passes it on. Config.PropagateCriticality limits the hosts told.
//
// # Outcomes
//
// A response is judged by its status (outcome.HTTPStatus): 429 is Throttled,
// with its Retry-After hint in seconds or as an HTTP-date; 408 and every 5xx
// but 501 and 505 are Transient, with the hint if the server sent one; other
// 4xx are Permanent; the rest succeed. An error is Permanent if the server's
// certificate is not trusted, the server does not speak TLS or net/http
// refused the request as malformed; the caller's own cancellation is never
// the server's fault; every other error (a refused or reset connection, an
// EOF before the response, a timeout, an HTTP/2 GOAWAY or refused stream) is
// Transient. Config.Classify overrides any of it per response.
//
// # Responses and errors
//
// RoundTrip returns a response or an error, never both. When the retries end
// on a failing status (the last 503 once the attempts are spent, a 404 at
// once), that response is returned as a plain http.Client would return it,
// with a nil error, its body intact: judge it by its status. The body of the
// response returned reads to its end whatever stages ran. The attempt
// timeout bounds the time to its headers only; the whole call's timeout
// bounds its reading too, as http.Client.Timeout does, unless the request
// is marked [Streaming]; a read that waits Config.BodyStallTimeout for a
// byte fails with a [*StallError]; and the caller's context ends it at any
// time. Closing it ends the call. Every response the pipeline discards (a retried 503, a hedge's
// loser) is read up to 4 KiB and closed, so that its connection is
// reused.
//
// A refusal (an open breaker, an empty retry budget) and a call that ends on
// an error return a *pipeline.StopError, which an http.Client wraps in a
// *url.Error: errors.Is(err, pipeline.DependencyUnavailable) and
// errors.AsType[*pipeline.StopError](err) see through both.
//
// A Transport is safe for concurrent use. Build one with [New] or
// [NewTransport], once, and share it.
type Transport struct {
	base         http.RoundTripper
	cfg          Config // for building each host's state
	userClassify outcome.Classifier[*http.Response]
	clock        clockwork.Clock   // nil for real time
	elapsed      clock.Elapsed     // clock, read by the bodies' stall watches
	stalls       *callctx.Schedule // the bodies' stall watches, one runtime timer for all
	obs          *keyed.Observer   // Config.Observer's; nil for none
	hosts        *keyed.Set[Host, *scope, *http.Response]
}

// scope is the state of one host: its standard pipeline, for replayable
// requests, and two pipelines that share its breaker and budget for the
// others.
type scope struct {
	// std is the host's standard pipeline: timeout -> retry -> breaker ->
	// hedge -> attempt timeout.
	std *standard.Pipeline[*http.Response]
	// once carries requests that are not replayable but can be rewound:
	// timeout -> retry -> resend -> breaker -> attempt timeout.
	once *pipeline.Pipeline[*http.Response]
	// single carries requests whose body cannot be rewound: timeout ->
	// resend -> breaker -> attempt timeout.
	single *pipeline.Pipeline[*http.Response]
	// stall is the host's stall timeout for returned bodies; 0 for none.
	stall time.Duration
}

// preset returns the key's standard pipeline, for the set's health and
// breaker listings.
func (s *scope) preset() *standard.Pipeline[*http.Response] { return s.std }

// NewTransport returns a transport with every default over base (nil means
// http.DefaultTransport): New(Config{Base: base}). It panics, naming the
// argument, if base is a nil pointer behind the interface, such as
// (*http.Transport)(nil).
func NewTransport(base http.RoundTripper) *Transport {
	t, err := New(Config{Base: base})
	if err != nil {
		panic(err) // only base can be wrong: a nil pointer
	}
	return t
}

// New returns a transport configured by cfg, or an error naming every setting
// of cfg that cannot work.
func New(cfg Config) (*Transport, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Base == nil {
		cfg.Base = http.DefaultTransport
	}
	if cfg.Standard.Retry.RefusalPause == 0 {
		cfg.Standard.Retry.RefusalPause = -1 // a refused request returns at once: see Config.Standard
	}
	t := &Transport{base: cfg.Base, cfg: cfg, userClassify: cfg.Classify, clock: cfg.Clock}
	t.obs = keyed.Observe(cfg.Observer, family, cfg.Clock)
	t.cfg.OnEvent = t.obs.Hook(cfg.OnEvent)
	t.elapsed.Clock = cfg.Clock
	t.elapsed.Start()
	t.stalls = callctx.NewSchedule(cfg.Clock)
	hosts, err := keyed.NewSet(keyed.SetConfig[Host, *scope, *http.Response]{
		Build: t.build, Standard: (*scope).preset,
		MaxKeys: cfg.MaxHosts, IdleAfter: cfg.IdleAfter, Clock: cfg.Clock, Observer: t.obs,
	})
	if err != nil {
		return nil, err
	}
	t.hosts = hosts
	return t, nil
}

// family names the transport's hosts together, for its Observer.
const family = "http"

// build builds the state of host h, on its first request.
func (t *Transport) build(h Host) (*scope, error) {
	cfg, err := t.cfg.hostConfig(h)
	if err != nil {
		return nil, err
	}
	std, err := standard.New[*http.Response](cfg)
	if err != nil {
		return nil, fmt.Errorf("pipelinehttp: the pipeline of %s: %w", h, err)
	}
	opts := pipeline.Options[*http.Response]{
		Name:         cfg.Name,
		Classifier:   t.classify,
		OnEvent:      t.cfg.OnEvent,
		Clock:        t.clock,
		Release:      release,
		WhenReleased: whenReleased,
		Describe:     describe,
	}
	std = std.With(opts)

	// The pipelines of the requests that are not replayable: the standard
	// one's stages, less the hedge, on its breaker and budget.
	total, attempt := cfg.Timeouts()
	whole := timeout.Config{Name: cfg.Name, Timeout: total}
	each := timeout.Config{Name: cfg.Name, Timeout: attempt, UntilReturn: true}
	rc := cfg.Retry
	rc.Name = cmp.Or(rc.Name, cfg.Name)
	rc.Budget = std.Budget
	once, err := standard.Compose[*http.Response](whole, rc, resend{sendAgain: true}, std.Breaker, each)
	if err != nil {
		return nil, fmt.Errorf("pipelinehttp: the pipeline of %s: %w", h, err)
	}
	single, err := standard.Compose[*http.Response](whole, resend{}, std.Breaker, each)
	if err != nil {
		return nil, fmt.Errorf("pipelinehttp: the pipeline of %s: %w", h, err)
	}
	stall := t.cfg.BodyStallTimeout
	if stall == 0 {
		stall = attempt
	}
	return &scope{std: std, once: once.With(opts), single: single.With(opts), stall: max(stall, 0)}, nil
}

// RoundTrip sends req through the pipeline of its host and returns the
// response to keep, or an error; see [Transport] for what is retried, what is
// hedged and what is returned.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	t.mustBeBuilt()
	if req.URL == nil || req.URL.Host == "" {
		return t.base.RoundTrip(req) // malformed requests are the base's to refuse
	}
	if passThrough(req) {
		if hdr := t.criticality(req, HostOf(req.URL)); hdr != nil {
			req = req.WithContext(req.Context()) // a copy: the caller's request is not modified
			req.Header = hdr
		}
		return t.base.RoundTrip(req)
	}
	m := marksOf(req.Context())
	h := HostOf(req.URL)
	h.Route = m.route
	s, err := t.hosts.Get(h)
	if err != nil {
		closeBody(req)
		return nil, err
	}
	p := s.single
	switch {
	case replayable(req, m.mode):
		p = s.std.Pipeline
	case rewindable(req):
		p = s.once
	}
	c := calls.Get().(*call)
	c.base, c.req = t.base, req
	c.header = t.criticality(req, h)
	if t.cfg.PropagateDeadline != nil && t.cfg.PropagateDeadline(h) {
		c.est, c.host = s.std.Estimator, h
	}
	start := t.obs.Start()
	resp, err := p.Execute(req.Context(), c.send)
	if t.obs != nil {
		t.observe(req.Context(), start, resp, err)
	}
	if !c.taken.Load() {
		closeBody(req) // no attempt sent it: the contract says RoundTrip closes it
	}
	c.recycle()
	if resp != nil && !errors.Is(err, outcome.ErrUnknownKind) {
		if d := stallOf(m, s.stall); d > 0 {
			t.watchBody(resp, h, d)
		}
		return resp, nil // the last response, even a failing one: as http.Client returns it
	}
	if resp != nil { // Config.Classify gave it a kind that is none: no answer to trust
		release(resp)
	}
	return nil, err
}

// criticality returns the header map the attempts of req to h send, with
// the level and tenant of req's context added if h is told them
// (Config.PropagateCriticality), or nil for the caller's own.
func (t *Transport) criticality(req *http.Request, h Host) http.Header {
	if t.cfg.PropagateCriticality != nil && !t.cfg.PropagateCriticality(h) {
		return nil
	}
	return criticalityHeader(req)
}

// observe tells the observer of a call started at start that returned resp
// and err: a response is judged as its attempt was (a 503 the retries ended
// on is a failure, though RoundTrip returns it with a nil error).
func (t *Transport) observe(ctx context.Context, start time.Duration, resp *http.Response, err error) {
	var v outcome.Verdict
	if err == nil && resp != nil {
		v, _ = t.classifyAt(resp, nil, time.Time{})
	}
	t.obs.Done(ctx, start, v, err)
}

// closeBody closes req's body, if it has one.
func closeBody(req *http.Request) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
}

// call is one RoundTrip: the caller's request, and whether its body has been
// handed to an attempt yet. Calls are pooled, each with its attempt function
// bound once: when Execute returns, every attempt has returned (no stage of
// the transport's pipelines abandons work), so nothing uses the call after
// RoundTrip puts it back.
type call struct {
	base  http.RoundTripper
	req   *http.Request
	taken atomic.Bool // req.Body has been given to an attempt, which closes it
	send  pipeline.Func[*http.Response]
	// header is the header map every attempt sends: a copy of the caller's
	// with the request's criticality added; nil for the caller's own.
	header http.Header
	// est measures the host's attempts, if the request's deadline goes to
	// the host (Config.PropagateDeadline); nil otherwise.
	est  *latency.Estimator
	host Host
}

// calls is the pool of calls.
var calls = sync.Pool{New: func() any {
	c := new(call)
	c.send = c.attempt
	return c
}}

// recycle puts c back in the pool.
func (c *call) recycle() {
	c.base, c.req, c.est, c.host, c.header = nil, nil, nil, Host{}, nil
	c.taken.Store(false)
	calls.Put(c)
}

// attempt sends one copy of the request, with ctx: a copy of the caller's,
// whose body is the caller's own the first time and a fresh one from GetBody
// after that.
//
// The copy is shallow (Request.WithContext): it shares the caller's header
// map (or the call's copy of it, with the request's criticality added), URL
// and trailer, which the base transport may read and must not modify
// (the http.RoundTripper contract), as http.Client's own copies do; a deep
// Request.Clone would copy the headers of every attempt for nothing (about a
// microsecond and four allocations a request, an eighth of what the whole
// transport adds).
func (c *call) attempt(ctx context.Context) (*http.Response, error) {
	r := c.req.WithContext(ctx)
	if c.header != nil {
		r.Header = c.header
	}
	if b := c.req.Body; b != nil && b != http.NoBody && !c.taken.CompareAndSwap(false, true) {
		if c.req.GetBody == nil { // only a request sent once can have such a body
			return nil, outcome.MarkPermanent(errNoRewind)
		}
		fresh, err := c.req.GetBody()
		if err != nil {
			return nil, outcome.MarkPermanent(fmt.Errorf("pipelinehttp: rewinding the request body: %w", err))
		}
		r.Body = fresh
	}
	if c.est != nil {
		if err := deadlineHeader(ctx, r, c.est, c.host); err != nil {
			if r.Body != nil {
				_ = r.Body.Close() // not sent: the RoundTripper contract says we close it
			}
			return nil, err
		}
	}
	resp, err := c.base.RoundTrip(r)
	if err != nil {
		if resp != nil && resp.Body != nil {
			_ = resp.Body.Close() // the RoundTripper contract allows one or the other
		}
		return nil, err
	}
	if resp == nil {
		return nil, outcome.MarkPermanent(fmt.Errorf("pipelinehttp: %T returned a nil *Response with a nil error", c.base))
	}
	return resp, nil
}

// errNoRewind is the error of an attempt that found no body to send.
var errNoRewind = errors.New("pipelinehttp: the request body was sent already and has no GetBody")

// CloseIdleConnections closes the idle connections of the base transport, if
// it has such a method (http.Client.CloseIdleConnections calls this one).
func (t *Transport) CloseIdleConnections() {
	t.mustBeBuilt()
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// Pipeline returns the standard pipeline of host h, building it if the
// transport holds no state for h, which then counts as a use of h. Its
// Breaker, Budget and Estimator are the host's: read them for a health check,
// or Isolate the breaker to stop sending to h. Requests that are not
// replayable run through pipelines of their own, without the hedge, that
// share this breaker and budget.
func (t *Transport) Pipeline(h Host) (*standard.Pipeline[*http.Response], error) {
	t.mustBeBuilt()
	s, err := t.hosts.Get(h)
	if err != nil {
		return nil, err
	}
	return s.std, nil
}

// Breakers calls f for every host the transport holds state for, with a
// snapshot of its breaker, most recently used first, until f returns false:
// for h, snap := range t.Breakers. It is read-only, for health endpoints: it
// changes no breaker and keeps no host from going idle.
func (t *Transport) Breakers(f func(Host, breaker.Snapshot) bool) {
	t.mustBeBuilt()
	t.hosts.Breakers(f)
}

// Health is the source of a health view (package health) that lists every
// host the transport holds state for at each report, under its name
// (Host.String), with its breaker, budget and latency estimator:
// registry.Add(transport.Health()). Reading it changes nothing and keeps no
// host from going idle.
func (t *Transport) Health() health.Source {
	t.mustBeBuilt()
	return t.hosts.Health()
}

// Len returns the number of hosts the transport holds state for, at most
// Config.MaxHosts.
func (t *Transport) Len() int {
	t.mustBeBuilt()
	return t.hosts.Len()
}

// mustBeBuilt panics, naming what to do, if t is not a transport New or
// NewTransport built: the zero Transport holds no base and no hosts.
func (t *Transport) mustBeBuilt() {
	if t.hosts == nil {
		panic("pipelinehttp: Transport used without pipelinehttp.New or NewTransport (its zero value is not usable)")
	}
}

package shed

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/criticality"
	"github.com/resilience-go/pipeline/internal/limit"
	"github.com/resilience-go/pipeline/internal/nilness"
)

// defaultRetryAfter is the Retry-After of a refusal that carries no hint of
// its own (a bulkhead's): a second, the header's smallest unit, so that a
// client that honours it comes back soon but not at once.
const defaultRetryAfter = time.Second

// Served is the result type of the pipeline a [Handler] runs each request
// through: nothing, since the handler writes its response itself. Stages of
// your own given to Config.Limits are pipeline.Policy[Served].
type Served = struct{}

// Config configures a [Handler]. Only Limits is required; the zero value of
// every other field means its default.
type Config struct {
	// Name names the handler's pipeline: the Pipeline of its events' Source.
	// Empty means unnamed.
	Name string
	// Limits guard every request, outermost first: each is a
	// *ratelimit.Limiter, a *bulkhead.Bulkhead, an *adaptive.Limiter (made
	// stages here, as their Guard functions make them), or a
	// pipeline.Policy[Served] of your own. At least one, none nil.
	Limits []pipeline.Described
	// RetryAfter is the Retry-After of a refusal that carries no hint of its
	// own. Zero means 1 s; it must not be negative.
	RetryAfter time.Duration
	// OnEvent receives the events of the limits, as a pipeline's
	// Options.OnEvent does. Nil means none.
	OnEvent func(context.Context, pipeline.Source, pipeline.Event)
	// Refused writes the response to a refused request, given the status
	// ([http.StatusTooManyRequests] for a rate limit's refusal,
	// [http.StatusServiceUnavailable] otherwise) and the refusal. Nil means a
	// short plain-text response with that status and, unless the request was
	// given up because its own context ended, a Retry-After header.
	Refused func(w http.ResponseWriter, r *http.Request, status int, err *pipeline.StopError)
	// Criticality decides the level each request is served at, from the one
	// its caller claims in pipelinehttp.CriticalityHeader: claimed, with ok
	// false when it claims none or sends a value that is not a level. It
	// returns the level to serve the request at, or 0 for none (it is then
	// served as criticality.Default). It is called for every request
	// whose context has no level yet, before the limits run, so that they
	// and the handler see its answer (criticality.From(r.Context())); it
	// must be quick and safe for concurrent use. Nil trusts the header: a
	// caller that claims a level gets it. Cap what callers you do not trust
	// may claim, trusting the peers of your mesh:
	//
	//	Criticality: func(r *http.Request, claimed criticality.Level, ok bool) criticality.Level {
	//		if meshPeer(r) { // say, the client certificate names one of your services
	//			return claimed
	//		}
	//		return min(claimed, criticality.Default)
	//	},
	//
	// The tenant in pipelinehttp.TenantHeader is read as it is (its first
	// criticality.MaxTenant bytes, if they are printable ASCII), unless the
	// request's context has a tenant already: set it from the caller's
	// identity in a middleware outside this one to keep callers from
	// naming it. A bulkhead or an adaptive limit of Limits bounds each
	// tenant when built with a TenantShare (bulkhead.Config.TenantShare).
	Criticality func(r *http.Request, claimed criticality.Level, ok bool) criticality.Level
}

// Handler is an http.Handler that runs another through a pipeline of limits
// and answers the requests they refuse itself. Build one with [New]. It is
// immutable and safe for concurrent use.
type Handler struct {
	next       http.Handler
	p          *pipeline.Pipeline[Served]
	retryAfter time.Duration
	refused    func(http.ResponseWriter, *http.Request, int, *pipeline.StopError)
	decide     func(*http.Request, criticality.Level, bool) criticality.Level // Config.Criticality
	calls      sync.Pool                                                      // of *call
}

// New returns a handler that serves each request with next once the limits of
// cfg admit it, or an error naming what in cfg cannot work.
func New(next http.Handler, cfg Config) (*Handler, error) {
	if next == nil {
		return nil, errors.New("shed: New: the next handler is nil")
	}
	if len(cfg.Limits) == 0 {
		return nil, errors.New("shed: Config.Limits is empty: give at least one limit")
	}
	if cfg.RetryAfter < 0 {
		return nil, fmt.Errorf("shed: Config.RetryAfter must not be negative (0 means the default %v), got %v", defaultRetryAfter, cfg.RetryAfter)
	}
	stages := make([]pipeline.Policy[Served], len(cfg.Limits))
	var errs []error
	for i, l := range cfg.Limits {
		s, err := stage(l)
		if err != nil {
			errs = append(errs, fmt.Errorf("shed: Config.Limits[%d]: %w", i, err))
		}
		stages[i] = s
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	h := &Handler{
		next:       next,
		p:          pipeline.New(stages...).With(pipeline.Options[Served]{Name: cfg.Name, OnEvent: cfg.OnEvent}),
		retryAfter: cfg.RetryAfter,
		refused:    cfg.Refused,
		decide:     cfg.Criticality,
	}
	if h.retryAfter == 0 {
		h.retryAfter = defaultRetryAfter
	}
	if h.refused == nil {
		h.refused = h.refuse
	}
	h.calls.New = func() any {
		c := &call{next: next}
		c.serve = c.run
		return c
	}
	return h, nil
}

// stage makes the stage l stands for.
func stage(l pipeline.Described) (pipeline.Policy[Served], error) {
	if nilness.Of(l) {
		return nil, fmt.Errorf("nil (%T)", l)
	}
	if p, ok := limit.Stage[Served](l); ok {
		return p, nil
	}
	if p, ok := l.(pipeline.Policy[Served]); ok {
		return p, nil
	}
	return nil, fmt.Errorf("a %T is neither a limit (%s) nor a pipeline.Policy[shed.Served]", l, limit.Names)
}

// call is one request on its way through the pipeline. Calls are pooled, with
// their serve function, so that serving a request allocates nothing of the
// handler's own.
type call struct {
	next  http.Handler
	w     http.ResponseWriter
	r     *http.Request
	serve pipeline.Func[Served] // c.run, bound once
}

// run serves the request with the context the limits handed on.
func (c *call) run(ctx context.Context) (Served, error) {
	r := c.r
	if ctx != r.Context() {
		r = r.WithContext(ctx)
	}
	c.next.ServeHTTP(c.w, r)
	return Served{}, nil
}

// ServeHTTP serves r with the next handler once the limits admit it, and
// answers it with a refusal otherwise. The limits and the handler see r's
// context with the criticality its caller sent (see Config.Criticality). A
// panic of the next handler goes on up, as it would without the limits,
// once they have given back what r held.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx := claim(r, h.decide)
	c := h.calls.Get().(*call)
	c.w, c.r = w, r
	_, err := h.p.Execute(ctx, c.serve)
	c.w, c.r = nil, nil
	h.calls.Put(c)
	if err == nil {
		return
	}
	stop, ok := err.(*pipeline.StopError)
	if !ok {
		stop, ok = errors.AsType[*pipeline.StopError](err)
	}
	if !ok { // not a refusal: a stage of the caller's returned its own error
		http.Error(w, http.StatusText(http.StatusInternalServerError), http.StatusInternalServerError)
		return
	}
	status := http.StatusServiceUnavailable
	if stop.Reason == pipeline.RateLimited {
		status = http.StatusTooManyRequests
	}
	if ctx != r.Context() {
		r = r.WithContext(ctx) // Config.Refused sees the level the request was refused at
	}
	h.refused(w, r, status, stop)
}

// refuse is the default response to a refused request.
func (h *Handler) refuse(w http.ResponseWriter, r *http.Request, status int, err *pipeline.StopError) {
	if err.Reason != pipeline.Canceled && err.Reason != pipeline.Deadline {
		w.Header().Set("Retry-After", RetryAfter(err, h.retryAfter))
	}
	http.Error(w, http.StatusText(status), status)
}

// RetryAfter returns the value of a Retry-After header for the refusal err: its
// hint, or def if it has none, in whole seconds rounded up, at least 1.
func RetryAfter(err *pipeline.StopError, def time.Duration) string {
	d := def
	if err != nil && err.RetryAfter > 0 {
		d = err.RetryAfter
	}
	return strconv.FormatInt(max(1, int64((d+time.Second-1)/time.Second)), 10)
}

package pipelinehttp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/health"
	"github.com/resilience-go/pipeline/internal/keyed"
	"github.com/resilience-go/pipeline/internal/nilness"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/standard"
)

// Config configures a [Transport]. Its zero value is the standard pipeline
// (standard.New with every default) for every host, over
// http.DefaultTransport.
type Config struct {
	// Base sends each attempt. Nil means http.DefaultTransport.
	Base http.RoundTripper
	// Standard configures every host's pipeline (see package standard), each
	// with a breaker, budget and estimator of its own. Its Name must be empty
	// (each host's pipeline is named after its host, Host.String) and so must
	// its Clock (set Clock below). Its Hedge.Repeatable is set by the
	// transport: only replayable requests reach the stage that hedges. Its
	// Retry.RefusalPause zero means none here, not the preset's 100 ms: a
	// request an open breaker refuses returns at once, so that a handler
	// can answer (a fallback, a 503) without waiting; set it for callers
	// that loop on refusals without reading their hint.
	Standard standard.Config
	// PerHost, if not nil, returns a host's own configuration, given the one
	// every host shares (Standard, named after the host): return it with the
	// settings to override for that host changed, or as it is. It is called
	// when the host's state is built (at its first request, and again after
	// an eviction); a configuration that cannot work is the error of that
	// request, which is then not sent.
	PerHost func(h Host, shared standard.Config) standard.Config
	// Classify, if not nil, is consulted for every attempt before the
	// transport's own rules (a response by its status, an error by its
	// shape), after the caller's cancellation and errors marked with
	// outcome.Mark: it returns false to leave an attempt to the rules. It must
	// be safe for concurrent use.
	Classify outcome.Classifier[*http.Response]
	// OnEvent, if not nil, receives every event of every host's pipelines,
	// with the context of the call or attempt it concerns and its source:
	// Source.Pipeline is the host (Host.String). It receives the events of
	// each host's breaker too (its transitions, Source{Stage: "breaker",
	// Name: the host}), beside any hook Standard.Breaker.OnEvent sets. See
	// pipeline.Options.OnEvent.
	OnEvent func(context.Context, pipeline.Source, pipeline.Event)
	// Observer, if not nil, is told of every host: it gets the events OnEvent
	// gets, through its KeyedHook for the family "http", every
	// call's duration and outcome, and the transport's Health, which it
	// reads as it pleases. A *pipelineotel.Telemetry (the OpenTelemetry
	// module) is one: with it, every host's calls, attempts, stops,
	// breaker and budget are in its metrics, from this one field.
	Observer health.Observer
	// MaxHosts is the most hosts whose state is kept at once; a new host
	// beyond it evicts the one seen longest ago. Zero means 1024, the
	// registry's default: room for every host a service calls, while
	// bounding what hosts taken from user input can cost (about 10 KB
	// each); negative is refused.
	MaxHosts int
	// IdleAfter is how long a host may go unused before its state is evicted
	// at the next insertion of a new host. Zero means 10 min, twice the
	// window over which a breaker measures its normal latency; negative is
	// refused.
	IdleAfter time.Duration
	// PropagateDeadline, if not nil, says which hosts are told how long the
	// caller will wait: each attempt to a host it returns true for carries
	// the time the attempt has left in TimeoutHeader (for [ServerDeadline]
	// or a service mesh on the other side), and an attempt with less time
	// left than the median of the host's recent attempts is not sent (a
	// refusal with reason pipeline.TooLittleTime). Nil sends it to no host:
	// how long a caller waits is for hosts of your own to know, not for a
	// third party's, and an API may refuse headers it does not know.
	PropagateDeadline func(Host) bool
	// PropagateCriticality, if not nil, says which hosts are told how much
	// a call matters: each request to a host it returns true for carries
	// its context's criticality level in [CriticalityHeader] and its tenant
	// in [TenantHeader] (see package criticality), when the context has
	// them. Unlike PropagateDeadline, nil sends them to every host: a level
	// is there only because the program marked the call, or a server read
	// it from its own caller, and is meant to reach the next hop. Name your
	// own hosts here if the tenants' names are not for third parties.
	PropagateCriticality func(Host) bool
	// BodyStallTimeout fails a read of a returned response body that waits
	// this long for a byte, with a *StallError; a body that keeps sending is
	// never cut by it, however long it takes. Zero means each host's
	// attempt timeout (Standard.AttemptTimeout, per host through PerHost);
	// negative means none. A request's StallTimeout mark overrides it.
	BodyStallTimeout time.Duration
	// Clock is the clock of every host's pipeline and state, of the registry
	// of hosts, and the one a Retry-After date is read against. Nil means real
	// time.
	Clock clockwork.Clock
}

// Validate reports every setting of c that cannot work, each naming its field
// and value, joined into one error; nil for a usable Config. It cannot check
// what PerHost will return: that is checked when a host's state is built.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("pipelinehttp: Config."+format, args...))
	}
	if c.Base != nil && nilness.Of(c.Base) {
		bad("Base is a nil %T: pass nil for http.DefaultTransport, or a transport that exists", c.Base)
	}
	errs = append(errs, keyed.Settings{
		Package: "pipelinehttp", Unit: "host", Key: "host", MaxField: "MaxHosts",
		Observer: c.Observer, MaxKeys: c.MaxHosts, IdleAfter: c.IdleAfter, Standard: c.Standard,
	}.Problems()...)
	if err := c.Standard.Validate(); err != nil {
		errs = append(errs, keyed.Within("pipelinehttp: Config.Standard", err))
	}
	return errors.Join(errs...)
}

// hostConfig is h's configuration: Standard named after h, with PerHost's
// changes and the transport's clock, or an error naming PerHost if what it
// returned cannot work.
func (c Config) hostConfig(h Host) (standard.Config, error) {
	var override func(standard.Config) standard.Config
	if c.PerHost != nil {
		override = func(shared standard.Config) standard.Config { return c.PerHost(h, shared) }
	}
	return keyed.Config(c.Standard, h.String(), override, fmt.Sprintf("pipelinehttp: Config.PerHost(%s)", h), c.Clock, c.OnEvent)
}

// describe says what a response is, in the error of a call whose last
// response was judged a failure: its status line.
func describe(resp *http.Response) string {
	if resp.Status != "" {
		return strings.TrimSpace(resp.Status)
	}
	return http.StatusText(resp.StatusCode)
}

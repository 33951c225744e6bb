package pipelinegrpc

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jonboulle/clockwork"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/health"
	"github.com/resilience-go/pipeline/internal/keyed"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/standard"
)

// Config configures a [Client]. Its zero value runs every RPC through the
// standard pipeline of its target (standard.New with every default), sends
// every method once (none is declared idempotent), and classifies status
// codes as the table in docs/grpc.md says.
type Config struct {
	// Standard configures every scope's pipeline (see package standard), each
	// with a breaker, budget and estimator of its own. Its Name must be empty
	// (each scope's pipeline is named after its key, Key.String) and so must
	// its Clock (set Clock below). Its Hedge.Repeatable is set by the client:
	// only idempotent calls reach the stage that hedges. Its
	// Retry.RefusalPause zero means none here, not the preset's 100 ms: an
	// RPC an open breaker refuses returns at once, so that a handler can
	// answer without waiting; set it for callers that loop on refusals
	// without reading their hint.
	Standard standard.Config
	// For, if not nil, returns a scope's own configuration, given the one
	// every scope shares (Standard, named after the key): return it with the
	// settings to change for that target or method changed, or as it is. It
	// is called when the scope's state is built (its first RPC, and again
	// after an eviction); a configuration that cannot work is the error of
	// that RPC, which is then not sent.
	For func(key Key, shared standard.Config) standard.Config
	// Methods declares methods by full name ("/pkg.Service/Method"), or every
	// method of a service at once ("/pkg.Service/"); a method's own entry wins
	// over its service's. A method not listed is sent once and shares its
	// target's scope. The map is copied by New.
	Methods map[string]Method
	// Codes replaces the kind the client gives a status code (see the table
	// in docs/grpc.md): codes.Aborted (Permanent by default) and
	// codes.Internal (Transient by default) are the two services disagree on.
	// codes.OK cannot be listed. The map is copied by New.
	Codes map[codes.Code]outcome.Kind
	// Classify, if not nil, judges an attempt before the built-in rules: the
	// method, the attempt's error (nil for a success) and the trailer the
	// server sent (which may be nil). It returns false to leave the attempt to
	// the rules. It never sees the caller's own cancellation, which is the
	// caller's whatever it says. It must be safe for concurrent use.
	Classify func(method string, err error, trailer metadata.MD) (outcome.Verdict, bool)
	// OnEvent, if not nil, receives every event of every scope's pipelines,
	// with the context of the call or attempt it concerns and its source:
	// Source.Pipeline is the scope's key (Key.String). It receives the
	// events of each scope's breaker too (its transitions, Source{Stage:
	// "breaker", Name: the key}), beside any hook Standard.Breaker.OnEvent
	// sets. See pipeline.Options.OnEvent.
	OnEvent func(context.Context, pipeline.Source, pipeline.Event)
	// Observer, if not nil, is told of every scope: it gets the events
	// OnEvent gets, through its KeyedHook for the family "grpc", every RPC's
	// duration and outcome (a stream's until it opens), and the client's
	// Health, which it reads as it pleases. A *pipelineotel.Telemetry (the
	// OpenTelemetry module) is one: with it, every scope's RPCs, attempts,
	// stops, breaker and budget are in its metrics, from this one field.
	Observer health.Observer
	// MaxScopes is the most scopes whose state is kept at once; a new scope
	// beyond it evicts the one used longest ago. Zero means 1024, the
	// registry's default: room for every target (and method with a scope of
	// its own) a service calls, while bounding what targets built from user
	// input can cost; negative is refused.
	MaxScopes int
	// IdleAfter is how long a scope may go unused before its state is
	// evicted at the next insertion of a new scope. Zero means 10 min;
	// negative is refused.
	IdleAfter time.Duration
	// Clock is the clock of every scope's pipelines and state, and of the
	// registry of scopes. Nil means real time.
	Clock clockwork.Clock
	// PropagateCriticality, if not nil, says which targets (as given to
	// grpc.NewClient) are told how much an RPC matters: each RPC to a
	// target it returns true for carries its context's criticality level
	// in [CriticalityKey] and its tenant in [TenantKey] (see package
	// criticality), when the context has them. Nil sends them to every
	// target: a level is there only because the program marked the RPC, or
	// a server read it from its own caller, and is meant to reach the next
	// hop. Name your own targets here if the tenants' names are not for
	// third parties. It must be safe for concurrent use.
	PropagateCriticality func(target string) bool
}

// Method declares how the client treats one method, or every method of a
// service (see Config.Methods). The zero value is a method sent once that
// shares its target's scope.
type Method struct {
	// Idempotent declares the method safe to send more than once: a unary
	// call is retried after a Transient or Throttled failure and hedged when
	// slow, and a server stream likewise until its first response. False
	// means every call is sent once, unless its context says otherwise (see
	// [Idempotent] and [SendOnce]).
	Idempotent bool
	// OwnScope gives the method a scope of its own on each target: its own
	// breaker, retry budget and latency estimator, and a Key whose Method is
	// set, so that For can configure it apart. False means the method shares
	// its target's scope with every other method that has none of its own.
	OwnScope bool
}

// Key identifies a scope: the target of a channel (grpc.ClientConn.Target, as
// given to grpc.NewClient) and, for a method with a scope of its own
// (Method.OwnScope), its full name. RPCs with the same Key share one breaker,
// one retry budget and one latency estimator.
type Key struct {
	// Target is the channel's target: "dns:///payments.internal:443".
	Target string
	// Method is the full method name ("/pkg.Service/Method") of a method with
	// a scope of its own, or "" for the target's shared scope.
	Method string
}

// String returns the key as the scope's pipeline is named: the target, then
// the method if it has a scope of its own ("dns:///payments:443/pay.Payments/Get").
func (k Key) String() string { return k.Target + k.Method }

// Validate reports every setting of c that cannot work, each naming its field
// and value, joined into one error; nil for a usable Config. It cannot check
// what For will return: that is checked when a scope's state is built.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("pipelinegrpc: Config."+format, args...))
	}
	errs = append(errs, keyed.Settings{
		Package: "pipelinegrpc", Unit: "scope", Key: "key", MaxField: "MaxScopes",
		Observer: c.Observer, MaxKeys: c.MaxScopes, IdleAfter: c.IdleAfter, Standard: c.Standard,
	}.Problems()...)
	for name := range c.Methods {
		if !validMethod(name) {
			bad("Methods: %q is neither a method (\"/pkg.Service/Method\") nor a service (\"/pkg.Service/\")", name)
		}
	}
	for code, kind := range c.Codes {
		switch {
		case code == codes.OK:
			bad("Codes: codes.OK cannot be reclassified: it is a success")
		case code > maxCode:
			bad("Codes: %v is not a gRPC status code", code)
		case kind > outcome.Permanent:
			bad("Codes[%v]: %v is not a kind", code, kind)
		}
	}
	if err := c.Standard.Validate(); err != nil {
		errs = append(errs, keyed.Within("pipelinegrpc: Config.Standard", err))
	}
	return errors.Join(errs...)
}

// validMethod reports whether name is a full method name ("/pkg.Service/Method")
// or a service's prefix ("/pkg.Service/").
func validMethod(name string) bool {
	rest, ok := strings.CutPrefix(name, "/")
	service, _, ok2 := strings.Cut(rest, "/")
	return ok && ok2 && service != "" && !strings.Contains(rest[len(service)+1:], "/")
}

// scopeConfig is key's configuration: Standard named after the key, with
// For's changes and the client's clock, or an error naming For if what it
// returned cannot work.
func (c Config) scopeConfig(key Key) (standard.Config, error) {
	var override func(standard.Config) standard.Config
	if c.For != nil {
		override = func(shared standard.Config) standard.Config { return c.For(key, shared) }
	}
	return keyed.Config(c.Standard, key.String(), override, fmt.Sprintf("pipelinegrpc: Config.For(%s)", key), c.Clock, c.OnEvent)
}

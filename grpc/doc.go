// Package pipelinegrpc puts the pipeline library under gRPC.
//
// On the client, a [Client] is a pair of interceptors, unary and stream, that
// run every RPC through the standard pipeline of its scope (a whole-call
// timeout, retries paid from a retry budget, a circuit breaker, a hedge and a
// per-attempt timeout), with a breaker, budget and latency estimator per
// target, and per method where [Config].Methods gives one a scope of its own:
//
//	c, err := pipelinegrpc.New(pipelinegrpc.Config{
//		Methods: map[string]pipelinegrpc.Method{"/pkg.Catalog/": {Idempotent: true}},
//	})
//	...
//	conn, err := grpc.NewClient(target, append(c.DialOptions(), creds)...)
//
// It judges every attempt by its status code (Unavailable is Transient,
// ResourceExhausted Throttled with the server's grpc-retry-pushback-ms as its
// hint, the codes of a bad request Permanent), never blames the server for
// the caller's own cancellation or deadline, sends again only what is
// declared idempotent (and a server stream only until its first response),
// and lets its timeouts travel to the server as gRPC deadlines.
//
// On the server, a [Shedder] is a pair of interceptors that run each RPC
// through limits (a bulkhead's fixed concurrency limit, an adaptive limit, a
// rate limit) and refuse what is over them at once, with ResourceExhausted
// and a pushback, as package shed does for HTTP.
//
// Both carry an RPC's criticality (package criticality) across the hop: the
// client sends the level and tenant of the RPC's context in the metadata
// keys resilience-criticality and resilience-tenant ([CriticalityKey],
// [TenantKey]), and a Shedder reads them into the handler's context before
// its limits run, capped as ShedConfig.Criticality decides for callers the
// server does not trust; [Criticality] reads them for a server that runs no
// limit. An RPC without a level sends none, and is served as
// criticality.Default. A handler that calls on with its context passes the
// level on.
//
// docs/grpc.md explains each rule and its reason, how the client coexists
// with gRPC's own retries, and what it costs, measured next to failsafe-go's
// failsafegrpc. The package is a module of its own, so that users of the
// library who do not use gRPC never fetch it.
package pipelinegrpc

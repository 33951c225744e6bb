// Package shed protects a server from more work than it can do: an
// http.Handler middleware that runs each request through limits, a rate
// limit, a bulkhead or an adaptive concurrency limit, and answers the
// requests they refuse itself, at once and cheaply, instead of letting them
// queue until they time out.
//
//	limit, err := adaptive.New(adaptive.Config{Name: "api"})
//	...
//	h, err := shed.New(mux, shed.Config{Limits: []pipeline.Described{limit}})
//	...
//	http.ListenAndServe(":8080", h)
//
// A request refused by a rate limit is answered 429 Too Many Requests; by a
// bulkhead or an adaptive limit, 503 Service Unavailable. Either way the
// response carries a Retry-After header in seconds: the refusal's own hint
// (the time until the rate limit's next token, the adaptive limit's median
// latency), rounded up, or Config.RetryAfter (1 s) when it has none, as a
// bulkhead's refusal does not. A request given up because its own context
// ended while it waited in a queue gets a 503 without the header. Config.Refused
// writes another response instead.
//
// Each request is served at the criticality level its caller sent in the
// Resilience-Criticality header (pipelinehttp.CriticalityHeader, as a
// pipelinehttp.Transport sends it), and for the tenant it names in
// Resilience-Tenant (pipelinehttp.TenantHeader): the middleware reads them into the request's context before the limits run,
// so that the limits and the handler see them (criticality.From), and a
// handler that calls on with that context passes them on. A request
// without a level is served as criticality.Default. Config.Criticality caps
// what callers the server does not trust may claim; [Criticality] reads the
// headers for a handler that runs no limit.
//
// Why shed. A server that takes every request shares its workers, memory and
// the dependencies behind it among all of them; past its capacity each
// request takes longer, clients time out and retry, and the server spends its
// time on answers nobody waits for. Refusing the excess at the door keeps the
// latency of the requests it does serve, and tells clients when to come back.
// An adaptive limit (package adaptive) finds that capacity from the handlers'
// own latency, which a fixed number has to guess.
//
// The limits see each request as one call whose latency is the handler's
// running time, and whose outcome is always a success: a handler that
// answers 500 quickly teaches the adaptive limit that the server is fast.
// A limit's queue (Config.MaxQueue of a bulkhead or an adaptive limit) makes
// a request wait for a slot, at most its MaxWait, and never after the
// request's context ends. A panic of the handler goes on up to net/http, as
// it would without the middleware, after the limits have given back its slot.
package shed

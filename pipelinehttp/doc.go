// Package pipelinehttp puts the pipeline library under an http.Client: a
// [Transport] wraps any http.RoundTripper and sends every request through the
// standard pipeline of its host (a whole-call timeout, retries paid from a
// retry budget, a circuit breaker, a hedge and a per-attempt timeout), with a
// breaker, budget and latency estimator per scheme, host and port:
//
//	client := &http.Client{Transport: pipelinehttp.NewTransport(nil)}
//
// The transport classifies every outcome (a response by its status, an error
// by its shape), sends again only what may be sent twice (net/http's own
// rule: a safe method or an idempotency key, and a body that can be rewound),
// reads and closes every response it discards so that its connection is
// reused, keeps the body of the response it returns readable to its end, and
// returns a response or an error, never both. A request whose context has
// a criticality level (package criticality) carries it, and its tenant, to
// the server in [CriticalityHeader] and [TenantHeader], where package shed
// reads them. [Config] overrides any setting, for every host or for one
// ([Config].PerHost), and the classification ([Config].Classify).
// docs/http.md explains each rule and its reason, and gives the cost
// measured next to failsafe-go's failsafehttp.
package pipelinehttp

// Package pipelineotel exports the behaviour of resilience pipelines to
// OpenTelemetry: metrics for calls, attempts, stops, retries, hedges,
// timeouts and circuit breakers, and for what rate limiters, bulkheads,
// adaptive limits, fallbacks, ceilings and fault injection decided;
// observable gauges of breakers' states, budgets' balances and limiters'
// limits; and span events on the span of each call.
//
// It lives in a module of its own, so that a user of the pipeline module
// never fetches OpenTelemetry. Build one [Telemetry] per meter provider and
// attach it in one call:
//
//	tel, err := pipelineotel.New(pipelineotel.Config{}) // the global providers
//	p, err := pipelineotel.NewStandard[*http.Response](tel, standard.Config{Name: "payments"})
//	hosts, err := pipelineotel.NewScopes(tel, standard.ScopesConfig[string, *http.Response]{...})
//
// or piece by piece for a pipeline built by hand: [Telemetry.Hook] as the
// pipeline's and the breaker's OnEvent, [Telemetry.ObserveBreaker],
// [Telemetry.ObserveBudget], [Telemetry.ObserveBulkhead],
// [Telemetry.ObserveAdaptiveLimiter], [Telemetry.ObserveRateLimiter] and
// [ObserveCeiling] for their state, [Calls] outermost to measure calls and
// [Attempts] inside the hedge for a span per attempt.
//
// Every instrument's name, unit and attributes are constants of this package
// and are listed, with what each measures and example queries, in
// docs/telemetry.md. Attributes are drawn from small fixed sets and from the
// names given to pipelines, stages, breakers and budgets; their sets are
// built once, so recording the events of a call that succeeds allocates
// nothing.
package pipelineotel

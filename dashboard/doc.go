// Package dashboard serves a live page of the state a service's
// resilience pipelines share: every dependency of a [health.Registry],
// with its breaker's state, pressure and recovery ramp, its budget's
// tokens, its latency (p50 and p99), its attempts and refusals per
// second, its last transitions, and sparklines of the last minutes. Mount
// it on a pattern that ends in a slash:
//
//	var deps health.Registry
//	dash, err := dashboard.New(dashboard.Config{Registry: &deps})
//	if err != nil { ... }
//	defer dash.Close()
//	http.Handle("/debug/dashboard/", dash)
//
// The page is one self-contained HTML document (its style and script
// inline, nothing fetched from elsewhere) whose table is rendered by the
// server, so it reads without JavaScript; with it, the page refreshes
// itself every Config.Interval. Beside the page, the dashboard serves the
// same state as JSON (state.json, a superset of the health view's JSON),
// and, when Config.Peers is set, a fleet view: one cell per process and
// dependency, coloured by the breaker's state (fleet.json).
//
// Attempts and refusals per second, and the causes of transitions, come
// from the events of the pipelines and breakers: set [Dashboard.Observe] as
// their hook. Without it the page shows the state alone, and the
// transitions it sees between two samples.
//
// Operator actions (isolate a breaker, reset it) exist only when
// Config.Authorize is set; each is logged. Reading the page, the JSON or
// the fleet view changes no breaker, budget or scope (see health).
//
// It imports the standard library and this module only.
package dashboard

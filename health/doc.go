// Package health reports the state a service's resilience pipelines share,
// for a health endpoint and for expvar: every registered breaker's state,
// pressure and measured normals (latency and failure rate), and every
// registered budget's balance, as JSON.
//
// Register standard presets with [Preset], whole per-key scopes with
// [Scopes], and a breaker and budget of a pipeline built by hand with [Of],
// then serve the [Registry] as an http.Handler, publish its [Registry.Func]
// with expvar.Publish, or read its [Registry.Report]:
//
//	var deps health.Registry
//	deps.Add(health.Preset(payments))
//	deps.Add(health.Scopes(hosts))
//	http.Handle("GET /debug/dependencies", &deps)
//	expvar.Publish("dependencies", deps.Func())
//
// Reading never changes a breaker or a budget, and a Scopes' keys are read
// without counting as a use. It imports the standard library and this
// module only, so a service without OpenTelemetry still sees its breakers.
package health

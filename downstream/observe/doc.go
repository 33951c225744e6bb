// Package observe holds no code of its own: it is a separate module that
// uses the pipeline library, its OpenTelemetry module and its gRPC module as
// an outside user would, through their exported API only, to prove that one
// line of setup puts an integration into every view a service has of it.
//
// For each of the HTTP transport (pipelinehttp), the gRPC client
// (pipelinegrpc) and per-key standard pipelines (standard.Scopes, through
// pipelineotel.NewScopes), its tests give the integration a
// *pipelineotel.Telemetry (the Observer field, or NewScopes) and
// pipeline.LogEvents as its event hook, call a healthy loopback server, then
// one that fails every request until the breaker opens, and read the
// result where an operator would: the OpenTelemetry metrics (calls by
// outcome, the breaker's state, pressure and transitions, the retry budget's
// balance), the slog lines (the breaker's transition), and the JSON health
// view that package health serves. Each view must say closed while the
// server is healthy and open after the storm, for that host or target by
// its name.
package observe

// Package breaker is the circuit breaker of the pipeline library: it stops
// sending attempts to a dependency that is failing, so that neither the caller nor
// the dependency drowns, and lets a few probes through to find out when it has
// recovered.
//
// # States
//
// A [Breaker] is Closed, Open, HalfOpen or Isolated ([State]; Recovering is
// reserved for a later recovery ramp). Closed admits everything and samples every
// attempt. Any trip condition opens it: Config.ConsecutiveFailures failures in a
// row, or, when configured, a failure ratio or slow-call ratio over the trip
// window. Open refuses everything until its break ends; the first attempt after
// that makes it HalfOpen and becomes a probe. HalfOpen admits at most
// Config.HalfOpenProbes probes at a time; Config.ProbeSuccesses successful probes
// close it, and one failed or slow probe opens it again with a longer break.
// Isolated is a manual Open that never ends by itself.
//
// Reading the state ([Breaker.State], [Breaker.Snapshot]) never changes it: an
// Open breaker whose break has elapsed reads HalfOpen, and only the next admission
// actually moves it.
//
// # Evidence
//
// Only a failure ([outcome.Verdict.Failure]: Transient and not self-imposed) and
// a success (Kind OK) are evidence. Throttled, Permanent, self-imposed and
// canceled outcomes neither count as failures nor end a run of failures. The
// breaker is consulted for every attempt, not every logical call.
//
// # Use
//
// Inside a pipeline, put [Guard] after the retry stage. Outside one, call
// [Breaker.Admit] before an attempt and [Breaker.Record] or [Breaker.Done] after
// it, exactly once per admitted Ticket.
//
// # Concurrency
//
// A Breaker is safe for concurrent use. Its state sits behind one sync.Mutex that
// is never held while user code runs. Events ([Transition], [Rejection]) are
// queued under that lock and delivered to Config.OnEvent after it is released,
// one at a time, in the order they happened; when several goroutines produce
// events at once, whichever is already delivering delivers the others' too, so a
// call may return before its own events have been delivered.
package breaker

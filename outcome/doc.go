// Package outcome classifies what one attempt of a call produced.
//
// Every attempt gets exactly one [Verdict], computed once by the pipeline right
// after the attempt returns, and every stage reads that same verdict. A verdict has
// one of four kinds:
//
//   - [OK]: the attempt succeeded.
//   - [Transient]: evidence that the dependency is failing; worth retrying, and
//     counted by a circuit breaker.
//   - [Throttled]: the dependency is working and defending itself; worth retrying
//     after its hint, never counted by a breaker.
//   - [Permanent]: retrying cannot help (usually the caller's own mistake); never
//     retried, never counted by a breaker.
//
// Errors are classified at their source with [MarkTransient], [MarkThrottled] and
// [MarkPermanent], by the well-known shapes [Of] recognises, or by a classifier the
// caller gives the pipeline. An error nobody recognises is Transient; see
// docs/outcomes.md for why.
//
// The package is a leaf: it imports only the standard library.
package outcome

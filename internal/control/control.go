// Package control lets this module's dashboard reach the breaker behind a
// dependency of a health report, to isolate or reset it at an operator's
// request, while the report itself gives whoever reads it no hold on the
// breaker: package health keeps the breaker in an unexported field of
// health.Dependency, and sets Breaker, when it is initialised, to read it.
package control

import "github.com/resilience-go/pipeline/policy/breaker"

// Breaker returns the breaker the dependency dep, a health.Dependency, was
// read from, or nil when it has none (a dependency without a breaker, or one
// a Source of the user's own built). Package health sets it before any
// package importing health runs; it takes an any because health imports
// this package, not the other way round.
var Breaker func(dep any) *breaker.Breaker

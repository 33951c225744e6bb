// Package simulation runs the library's own decision code against modelled
// dependencies on virtual time, and reports what a configuration costs:
// calls offered, served, refused and failed, the load multiplier on the
// dependency, latency, breaker opens, probes and the time to recover.
//
// # What runs for real
//
// Each client process of a run has a real *breaker.Breaker, driven through
// Admit and Record before and after every attempt, a real *budget.Budget, and
// a real retry.Backoff. The retry loop around them is the simulation's own, but
// it applies the retry stage's rules in the retry stage's order, and a test
// runs the real stage (package policy/retry, in a testing/synctest bubble) and
// the simulated loop on the same scripts to keep the two identical. What is
// modelled is the dependency ([Model]: [Healthy], [Brownout], [Outage],
// [FailingFraction], [Capacity], composed by wrapping) and the load (a fleet of
// processes, each offering calls at a constant rate).
//
// # Determinism
//
// A run is a discrete-event simulation on one goroutine. Events are ordered by
// time and, at equal times, by the order they were scheduled; before each one,
// the fake clock every breaker and budget of the run shares is advanced to its
// time. Every random draw (the model's, each process's arrival phase, break
// jitter and retry jitter) comes from a PCG generator seeded from
// [Config].Seed, and no output depends on map order, so the same Config gives
// a byte-identical [Report], rendering and chart.
//
// # Scenarios
//
// [Scenarios] lists the built-in demonstrations (the retry storm, the
// synchronized probe, the cold start), each a test of this package and
// runnable with
//
//	go run ./cmd/simulate
//
// which prints their reports and writes SVG charts ([Chart]).
//
// # Concurrency
//
// [Run] may be called from many goroutines at once: runs share nothing. A
// Model is a configuration value; each run starts its own [Dependency] from it.
package simulation

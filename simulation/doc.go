// Package simulation runs the library's own decision code against modelled
// dependencies on virtual time, and reports what a configuration costs:
// calls offered, served, refused and failed, the load multiplier on the
// dependency, latency, breaker opens, probes, recovery ramps and the time to
// recover.
//
// # What runs for real
//
// Each client process of a run has a real *breaker.Breaker, driven through
// Admit and Record before and after every attempt (its recovery ramp too, when
// its Config has one), a real *budget.Budget, a real retry.Backoff and, when
// it hedges, a real *latency.Estimator that sets its hedge delay. The retry loop and the hedge race around them are the
// simulation's own, on events instead of goroutines and timers, but they apply
// the retry and hedge stages' rules in those stages' order, and tests run the
// real stages (packages policy/retry and policy/hedge, in testing/synctest
// bubbles) and the simulation on the same scripts to keep the two identical.
// A [SlowJudge] is an instrument beside them: it judges each process's
// attempts slow or not over a copy of the breaker's trip window, by the
// breaker's own threshold or one it does not offer, and changes nothing.
// What is modelled is the dependency ([Model]: [Healthy], [Brownout],
// [Outage], [FailingFraction], [Capacity], composed by wrapping) and the load
// (a fleet of processes, each offering calls at a constant rate).
// [Config].Arrivals makes those calls [Poisson] instead of evenly spaced, and
// [Config].Steps changes their rate at given times ([Step]), so any run can
// also be run under bursts, spikes and pauses.
//
// # Determinism
//
// A run is a discrete-event simulation on one goroutine. Events are ordered by
// time and, at equal times, by the order they were scheduled; before each one,
// the fake clock every breaker, budget and estimator of the run shares is
// advanced to its time. Every random draw (the model's, each process's arrival
// phase or Poisson gaps, break jitter and retry jitter) comes from a PCG
// generator seeded from [Config].Seed, and no output depends on map order, so
// the same Config gives a byte-identical [Report], rendering and chart.
//
// # Scenarios
//
// [Scenarios] lists the built-in demonstrations (the retry storm, the
// synchronized probe, the cold start, hedging, the slow-call trip, the ramp
// against the cliff), each a test of this package and runnable with
//
//	go run ./cmd/simulate
//
// which prints their reports and writes SVG charts ([Chart]), each fault's
// window shaded ([FaultBands]), and one HTML page of them all.
//
// A [Grid] runs many clients over a grid of loads and outages and judges each
// against a baseline; [MetastabilityGrid] is the built-in one, which holds
// the preset ([Preset]) to never making an outage worse than its retries
// alone, and the command runs it as the metastability scenario, with a
// [HeatMap] per client.
//
// # Concurrency
//
// [Run] may be called from many goroutines at once: runs share nothing. A
// Model is a configuration value; each run starts its own [Dependency] from it.
package simulation

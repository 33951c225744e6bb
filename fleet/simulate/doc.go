// Package simulate runs a fleet of client processes against one dependency on
// virtual time, to compare three ways of sharing their circuit breakers:
// none (each process on its own), naive shared state (any process that opens
// opens everyone), and the fleet's quorum (package fleet).
//
// # What runs for real
//
// Each process has its own real *breaker.Breaker, driven through Admit and
// Record around every call, on one fake clock the whole run shares. The
// sharing strategies run the fleet's own decision, package
// fleet/internal/quorum, which package fleet applies to the reports it reads
// from Redis: what each process reports of its breaker, when the reports of
// the processes seen within the TTL make a quorum, and how a closed breaker
// follows one (IsolateFor twice the refresh, renewed every round). Redis
// itself is modelled: each process publishes its report and reads everyone's
// once every refresh, at its own phase, and a round trip takes no time
// unless Config.Redis gives it a latency, or failures: then a round trip
// over the round's timeout, or failing, applies nothing, as the fleet's
// (redis.go says how). The dependency is modelled by the root simulation
// package's models.
//
// # Determinism
//
// A run is a discrete-event simulation on one goroutine; events are ordered
// by time and, at equal times, by the order they were scheduled. Every random
// draw (the model's latencies, the processes' phases, the breakers' break
// jitter, the processes restarted, Redis's latencies) comes from PCG
// generators seeded from Config.Seed, so the same Config gives a
// byte-identical Report, text and charts.
//
// # The scenario
//
// [Scenario] runs the three strategies in each of [Cases]: a fleet-wide
// outage and one sick process under an even load, and the outage again
// under an uneven one; [Summary] and [Charts] compare them, and the command
// fleet/cmd/simulate prints and draws them. docs/fleet.md gives the figures.
//
// # The fleet's own failures
//
// [RunFailures] runs each of [Failures], the ways the fleet itself can
// fail: processes restarted during the outage ([Restart]: new ids, fresh
// breakers, Watch starting them as the fleet's does), a slow Redis and an
// absent one (Config.Redis), and the dependency failing for a third of the
// fleet ([ZoneOutage]). [FailureSummary] and [Failure.Chart] compare each
// case's runs; docs/fleet-failures.md gives the figures.
//
// # Concurrency
//
// [Run], [Scenario] and [RunFailures] may be called from many goroutines at
// once: runs share nothing. A Report is not modified after Run returns it.
package simulate

// Package fleet shares the circuit breakers of a service's processes through
// Redis by quorum, and gives operators a fleet-wide isolation switch.
//
// Each process watches its named breakers with [Fleet.Watch]. A background
// goroutine publishes, every Config.Refresh, whether each breaker refuses on
// its own evidence, and reads how many of the processes seen within
// Config.TTL say so. When a quorum does (more than half of them by default,
// and never fewer than two), the fleet forces every other process's closed
// breaker open for a short break it renews while the quorum holds; each
// process still recovers on its own, probing after its own breaks. Redis is
// never consulted on the call path: when it is slow or down, every process
// goes on with its local breakers and the fleet raises [Degraded].
//
// A rate limit shared by the processes of a service, on the same Redis, is
// package github.com/resilience-go/pipeline/fleet/quota.
//
// See docs/fleet.md for the delays the breakers guarantee and the keys they
// write.
package fleet

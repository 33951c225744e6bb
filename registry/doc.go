// Package registry keeps one value per key, built on the key's first use and
// bounded in number: the per-key scopes of a resilience pipeline, where each
// dependency (a host, a service, a method) gets its own breaker, retry budget
// and latency estimator, so that one failing host does not open the breaker of
// the others.
//
// A [Registry] builds a key's value with Config.New the first time the key is
// asked for, once however many goroutines ask at the same time, and hands the
// same value to every later [Registry.Get] until the key is evicted. It holds
// at most Config.MaxKeys keys (1024 by default): when a new key arrives and
// there is no room, it evicts the keys that have been idle for
// Config.IdleAfter (10 minutes by default), and if there are none, the key it
// saw used longest ago. Idle keys are also evicted when there is room, at the
// insertion of any new key; no goroutine runs in the background. Config.OnEvict
// hears of every eviction.
//
// The Get of a key the registry holds is the hot path: it takes no lock,
// reads no clock and allocates nothing; it costs a lookup in an immutable map
// and an atomic load, less than a sync.Map Load. Inserting a key, which calls
// New, is the slow path.
//
// The package is a leaf: it imports only the standard library and clockwork.
// A Registry is safe for concurrent use.
package registry

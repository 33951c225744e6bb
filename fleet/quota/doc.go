// Package quota shares one rate limit among the processes of a service
// through Redis: the quota a dependency grants the whole fleet ("1,000
// requests a minute, for all your pods together"), spent by every process
// against the same count.
//
// The fleet's tokens live in Redis, in one key that one script updates. Each
// process leases a few at a time (Config.Lease) and spends them locally:
// [Guard] makes a [Quota] a pipeline stage whose call path takes a token
// from the lease with one atomic operation and never waits on Redis, and a
// background goroutine fetches the next lease before this one runs dry. A
// call that finds no token is refused at once, or waits for one, up to
// Config.MaxWait, in a queue served by criticality level and, within a
// level, in turn. In any stretch of time t the fleet admits at most
// Rate × t + Burst + processes × Lease calls.
//
// When Redis is slow or down, nothing waits on it: each process raises
// [fleet.Degraded] and admits its local share, the quota's rate divided by
// the processes Redis last saw fetching (or by Config.Processes for a
// process that never reached it), until a fetch succeeds again and raises
// [fleet.Recovered]; the calls it admitted meanwhile are then charged to
// Redis, up to the share's burst. The events are package fleet's own, so
// that one hook may serve the breakers and the quotas.
//
// See docs/quota.md for the bound, the keys the quota writes and its
// behaviour during an outage, and docs/fleet.md for Redis Cluster.
package quota

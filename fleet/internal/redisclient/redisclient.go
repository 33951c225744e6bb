// Package redisclient holds what package fleet and package fleet/quota both
// check of the Redis client they are given.
package redisclient

import "github.com/redis/go-redis/v9"

// IgnoresDeadlines reports whether c is a go-redis client built without
// ContextTimeoutEnabled. Such a client bounds a call by its own timeouts
// (DialTimeout, ReadTimeout: 5 s and 3 s by default) and not by the call's
// context, so no Timeout or Refresh of ours could bound a call to a Redis
// that stalls: the fleet and the quota refuse it. A client of another type
// cannot be inspected; it must return once a call's context is done, as
// their Config.Redis says.
func IgnoresDeadlines(c redis.UniversalClient) bool {
	switch c := c.(type) {
	case *redis.Client:
		return !c.Options().ContextTimeoutEnabled
	case *redis.ClusterClient:
		return !c.Options().ContextTimeoutEnabled
	case *redis.Ring:
		return !c.Options().ContextTimeoutEnabled
	}
	return false
}

// DeadlinesProblem is the text of the refusal of a client that ignores
// deadlines.
const DeadlinesProblem = "Redis ignores context deadlines, so no timeout of ours could bound a call to a stalled Redis: build it with ContextTimeoutEnabled: true in its options (redis.Options, ClusterOptions or RingOptions)"

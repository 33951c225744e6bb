package fleet

import "github.com/redis/go-redis/v9"

// ignoresDeadlines reports whether c is a go-redis client built without
// ContextTimeoutEnabled. Such a client bounds a call by its own timeouts
// (DialTimeout, ReadTimeout: 5 s and 3 s by default) and not by the call's
// context, so no Timeout or Refresh of ours could bound a call to a Redis
// that stalls: the fleet and the quota refuse it. A client of another type
// cannot be inspected; it must return once a call's context is done, as
// Config.Redis says.
func ignoresDeadlines(c redis.UniversalClient) bool {
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

// deadlinesProblem is the text of the refusal of a client that ignores
// deadlines.
const deadlinesProblem = "Redis ignores context deadlines, so no timeout of ours could bound a call to a stalled Redis: build it with ContextTimeoutEnabled: true in its options (redis.Options, ClusterOptions or RingOptions)"

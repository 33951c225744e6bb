// Package hashtag builds the Redis Cluster hash tag that the keys of one
// breaker of package fleet, or of one quota of package fleet/quota, share:
// every command and script names the keys of one tag only, so that a
// cluster keeps them in one slot.
package hashtag

import "strconv"

// Of is the hash tag of name in namespace, {len(namespace):namespace:name}:
// the namespace's length in bytes first, so that no two pairs of names share
// a tag, though either may contain ':' (neither may contain a brace). Joined
// with ':' alone, breaker "b:c" of fleet "svc" and breaker "c" of fleet
// "svc:b" shared their keys, and one fleet's Isolate reached the other's
// breaker.
func Of(namespace, name string) string {
	return "{" + strconv.Itoa(len(namespace)) + ":" + namespace + ":" + name + "}"
}

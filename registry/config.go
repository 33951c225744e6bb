package registry

import (
	"errors"
	"fmt"
	"time"

	"github.com/jonboulle/clockwork"
)

// Defaults used for the zero values of [Config]'s fields.
const (
	// DefaultMaxKeys is the most keys a Registry holds when Config.MaxKeys is
	// 0. A service calls a few to a few hundred dependencies (hosts, services,
	// methods); 1024 holds all of them with room to spare, while bounding what
	// a stream of made-up keys can cost: at about 5.4 KB for a default breaker,
	// 1024 keys take about 5.5 MB.
	DefaultMaxKeys = 1024
	// DefaultIdleAfter is how long a key goes unused before it is idle when
	// Config.IdleAfter is 0. Ten minutes is twice the 5 min over which a
	// default breaker measures its normal latency and five times its longest
	// break (2 min), so a dependency called in bursts keeps what its key has
	// learned across quiet spells, while one that is gone is forgotten within
	// about twenty minutes (see [Registry] for the bound).
	DefaultIdleAfter = 10 * time.Minute
)

// Config configures a [Registry]. The zero value of every field except New
// means its default. Settings that cannot work are refused by
// [Config.Validate] and [New] with an error naming each bad field and its
// value.
type Config[K comparable, V any] struct {
	// New builds the state of a key on its first use, and again on the first
	// use after the key was evicted. It is required. The registry calls it
	// with no lock held, at most once at a time per key: concurrent Gets of a
	// key being built wait for this call and share its result. An error is
	// returned to those Gets and nothing is stored, so the next Get calls New
	// again. New may call Get for other keys, but not for its own, directly or
	// through the New of another key: that Get would wait for itself.
	New func(key K) (V, error)
	// MaxKeys is the most keys the registry holds at once: a positive number.
	// Zero means [DefaultMaxKeys] (1024); negative is refused.
	MaxKeys int
	// IdleAfter is how long a key may go unused before it is idle, and evicted
	// at the next insertion of a new key: a positive duration. Zero means
	// [DefaultIdleAfter] (10 min); negative is refused.
	IdleAfter time.Duration
	// OnEvict, if not nil, is called with every key the registry evicts and
	// the state it held, once per eviction, after the registry has let go of
	// it and with no lock held, by the Get whose new key caused the eviction.
	// Callers that got v before the eviction may still be using it, and the
	// key's next state may already be built, so OnEvict must not break v for
	// them: unregister it, flush it, do not close what they need. Calls for
	// different keys may run concurrently.
	OnEvict func(key K, v V)
	// Clock is the clock the registry reads when it inserts a new key (never
	// in the Get of a key it holds). Nil means real time.
	Clock clockwork.Clock
}

// Validate returns an error naming every setting of c that cannot work, joined
// with errors.Join, or nil. Zero values other than New are valid: they mean
// the defaults.
func (c Config[K, V]) Validate() error {
	var errs []error
	if c.New == nil {
		errs = append(errs, errors.New("registry: Config.New is required (it builds the state of a key), got nil"))
	}
	if c.MaxKeys < 0 {
		errs = append(errs, fmt.Errorf("registry: Config.MaxKeys must not be negative (0 means the default %d), got %d",
			DefaultMaxKeys, c.MaxKeys))
	}
	if c.IdleAfter < 0 {
		errs = append(errs, fmt.Errorf("registry: Config.IdleAfter must not be negative (0 means the default %v), got %v",
			DefaultIdleAfter, c.IdleAfter))
	}
	return errors.Join(errs...)
}

// withDefaults returns c with every zero field replaced by its default.
func (c Config[K, V]) withDefaults() Config[K, V] {
	if c.MaxKeys == 0 {
		c.MaxKeys = DefaultMaxKeys
	}
	if c.IdleAfter == 0 {
		c.IdleAfter = DefaultIdleAfter
	}
	return c
}

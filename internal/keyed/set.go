package keyed

import (
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/resilience-go/pipeline/health"
	"github.com/resilience-go/pipeline/policy/breaker"
	"github.com/resilience-go/pipeline/registry"
	"github.com/resilience-go/pipeline/standard"
)

// Set is the state an integration keeps per key, S for each key K (a
// transport's hosts, a gRPC client's scopes): each built on its key's first
// use, at most MaxKeys of them, each dropped once idle. Each holds the
// standard pipeline its key's calls run through, with result type T, whose
// breaker, budget and estimator the set lists for health checks.
type Set[K comparable, S, T any] struct {
	keys *registry.Registry[K, S]
	std  func(S) *standard.Pipeline[T]
}

// SetConfig configures a Set.
type SetConfig[K comparable, S, T any] struct {
	// Build builds a key's state, on its first use.
	Build func(K) (S, error)
	// Standard returns the standard pipeline of a key's state.
	Standard func(S) *standard.Pipeline[T]
	// MaxKeys, IdleAfter and Clock are the registry's (0 and nil for its
	// defaults).
	MaxKeys   int
	IdleAfter time.Duration
	Clock     clockwork.Clock
	// Observer, if not nil, reads the health of every key held for as long
	// as the set lives.
	Observer *Observer
}

// NewSet returns an empty set configured by cfg, or the registry's error
// for a bound that cannot work.
func NewSet[K comparable, S, T any](cfg SetConfig[K, S, T]) (*Set[K, S, T], error) {
	keys, err := registry.New(registry.Config[K, S]{
		New:       cfg.Build,
		MaxKeys:   cfg.MaxKeys,
		IdleAfter: cfg.IdleAfter,
		Clock:     cfg.Clock,
	})
	if err != nil {
		return nil, err
	}
	s := &Set[K, S, T]{keys: keys, std: cfg.Standard}
	watch(cfg.Observer, s, (*Set[K, S, T]).Health)
	return s, nil
}

// Get returns key's state, building it if the set holds none, which then
// counts as a use.
func (s *Set[K, S, T]) Get(key K) (S, error) { return s.keys.Get(key) }

// Len returns the number of keys held.
func (s *Set[K, S, T]) Len() int { return s.keys.Len() }

// Breakers calls f for every key held, with a snapshot of its breaker, in
// registry.Range's order (the key seen most recently first), until f
// returns false. It changes no breaker and keeps no key from going idle.
func (s *Set[K, S, T]) Breakers(f func(K, breaker.Snapshot) bool) {
	s.keys.Range(func(k K, v S) bool { return f(k, s.std(v).Breaker.Snapshot()) })
}

// Health is the source of a health view that lists every key held at each
// report, with its standard pipeline's breaker, budget and estimator. Reading
// it changes nothing and keeps no key from going idle.
func (s *Set[K, S, T]) Health() health.Source {
	return health.Pipelines(func(yield func(*standard.Pipeline[T]) bool) {
		s.keys.Range(func(_ K, v S) bool { return yield(s.std(v)) })
	})
}

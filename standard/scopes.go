package standard

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/internal/nilness"
	"github.com/resilience-go/pipeline/policy/breaker"
	"github.com/resilience-go/pipeline/registry"
)

// ScopesConfig configures [Scopes]: the standard pipeline of every key, and
// how many keys are kept.
type ScopesConfig[K comparable, T any] struct {
	// Config is every key's configuration. Its Name is replaced by the key's
	// name (see Name).
	Config Config
	// For, if not nil, returns a key's own configuration, given the shared one
	// (Config with the key's name): return it changed to override a setting
	// for that key, or as it is. It is called when the key's pipeline is
	// built, on the key's first use and again after an eviction; an impossible
	// configuration is then the error of that Get.
	For func(key K, shared Config) Config
	// Name names a key's pipeline and its state, for events, stop errors and
	// telemetry. It is called once per build of the key's pipeline. Nil means
	// fmt.Sprint(key).
	Name func(key K) string
	// Options are set on every key's pipeline (pipeline.Pipeline.With), for
	// values that hold resources, an event hook, a classifier. Its Name is
	// ignored: every key's pipeline carries the key's name. Its OnEvent
	// receives the events of every key's breaker too (its transitions, with
	// Source.Name the key's name), beside any hook Config.Breaker.OnEvent
	// sets, so that one hook sees every event of every key.
	Options pipeline.Options[T]
	// Outer are stages placed outside every key's pipeline, the first
	// outermost, before its whole-call timeout: for a stage that measures
	// whole calls, such as the OpenTelemetry module's Calls, so that calls
	// made through the pipeline Get returns are measured as well as those
	// made through Execute. Every key shares them, so they must be safe for
	// concurrent use. Nil means none: the preset as it is.
	Outer []pipeline.Policy[T]
	// MaxKeys is the most keys held at once; a new key beyond it evicts the
	// key seen longest ago. Zero means registry.DefaultMaxKeys (1024).
	MaxKeys int
	// IdleAfter is how long a key may go unused before it is evicted at the
	// next insertion. Zero means registry.DefaultIdleAfter (10 min).
	IdleAfter time.Duration
	// OnEvict, if not nil, is called with every evicted key and its pipeline
	// (see registry.Config.OnEvict): calls already running on it finish
	// normally.
	OnEvict func(key K, p *Pipeline[T])
}

// Validate reports every setting of c that cannot work, each naming its field,
// joined into one error; nil for a usable ScopesConfig. A key's own
// configuration (For) is checked when the key's pipeline is built.
func (c ScopesConfig[K, T]) Validate() error {
	errs := []error{c.Config.Validate()}
	if c.MaxKeys < 0 {
		errs = append(errs, fmt.Errorf("standard: ScopesConfig.MaxKeys must not be negative (0 means %d), got %d", registry.DefaultMaxKeys, c.MaxKeys))
	}
	if c.IdleAfter < 0 {
		errs = append(errs, fmt.Errorf("standard: ScopesConfig.IdleAfter must not be negative (0 means %v), got %v", registry.DefaultIdleAfter, c.IdleAfter))
	}
	for i, p := range c.Outer {
		if nilness.Of(p) {
			errs = append(errs, fmt.Errorf("standard: ScopesConfig.Outer[%d] is nil", i))
		}
	}
	return errors.Join(errs...)
}

// Scopes keeps one standard pipeline per key (a host, a service, a method),
// each with its own breaker, budget and estimator, built on the key's first
// use and evicted when idle or when MaxKeys is reached: one failing host opens
// its own breaker, not everybody's, and keys that come from user input cannot
// grow it without bound. It is safe for concurrent use. Build one with
// [NewScopes].
type Scopes[K comparable, T any] struct {
	keys *registry.Registry[K, *Pipeline[T]]
}

// NewScopes returns an empty set of scopes, or an error naming every setting
// of cfg that cannot work.
func NewScopes[K comparable, T any](cfg ScopesConfig[K, T]) (*Scopes[K, T], error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	name := cfg.Name
	if name == nil {
		name = func(key K) string { return fmt.Sprint(key) }
	}
	outer := slices.Clone(cfg.Outer)
	build := func(key K) (*Pipeline[T], error) {
		c := cfg.Config
		c.Name = name(key)
		if cfg.For != nil {
			c = cfg.For(key, c)
		}
		c.Breaker.OnEvent = pipeline.Hooks(cfg.Options.OnEvent, c.Breaker.OnEvent)
		p, err := assemble(c, outer, nil)
		if err != nil {
			return nil, fmt.Errorf("standard: the pipeline of key %q: %w", c.Name, err)
		}
		o := cfg.Options
		o.Name = ""
		return p.With(o), nil
	}
	keys, err := registry.New(registry.Config[K, *Pipeline[T]]{
		New:       build,
		MaxKeys:   cfg.MaxKeys,
		IdleAfter: cfg.IdleAfter,
		OnEvict:   cfg.OnEvict,
		Clock:     cfg.Config.Clock,
	})
	if err != nil { // Validate checked what registry.New checks: a bug
		panic(err)
	}
	return &Scopes[K, T]{keys: keys}, nil
}

// Get returns key's pipeline, building it on the key's first use. For a key
// already held it allocates nothing and takes no lock (see registry.Get).
func (s *Scopes[K, T]) Get(key K) (*Pipeline[T], error) { return s.keys.Get(key) }

// Execute runs fn through key's pipeline: Get, then Execute. If the key's
// pipeline cannot be built, it returns that error and does not run fn.
func (s *Scopes[K, T]) Execute(ctx context.Context, key K, fn pipeline.Func[T]) (T, error) {
	p, err := s.keys.Get(key)
	if err != nil {
		var zero T
		return zero, err
	}
	return p.Execute(ctx, fn)
}

// Len returns the number of keys held.
func (s *Scopes[K, T]) Len() int { return s.keys.Len() }

// Range calls f for every key held, with its pipeline, most recently used
// first, until f returns false: for key, p := range scopes.Range. It does not
// count as a use.
func (s *Scopes[K, T]) Range(f func(K, *Pipeline[T]) bool) { s.keys.Range(f) }

// Breakers calls f for every key held, with a snapshot of its breaker, most
// recently used first, until f returns false: for key, snap := range
// scopes.Breakers. It is read-only, for health endpoints: it changes no
// breaker and keeps no key from going idle.
func (s *Scopes[K, T]) Breakers(f func(K, breaker.Snapshot) bool) {
	s.keys.Range(func(key K, p *Pipeline[T]) bool { return f(key, p.Breaker.Snapshot()) })
}

package registry

import (
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/resilience-go/pipeline/internal/queue"
)

// Registry holds one value of type V per key K, built on the key's first use
// by Config.New: the state a caller keeps per dependency (a breaker, a budget,
// a latency estimator per host). It holds at most Config.MaxKeys keys at once,
// whatever keys it is asked for, so keys may come from user input.
//
// # Eviction
//
// [Registry.Get] of a key the registry holds reads no clock and reorders
// nothing: it sets the key's used flag, if it is not set already. The registry
// keeps its keys in a queue ordered by when it last saw each one used: at its
// insertion, or when it found the key's flag set. Only the insertion of a new
// key, which reads the clock once, looks at the queue, from the end seen
// longest ago:
//
//  1. Idle keys go first. While the key at the old end was last seen
//     Config.IdleAfter ago or more: if its flag is set, the key was used since;
//     it is seen now (its flag cleared, moved to the new end). Otherwise it is
//     idle and evicted.
//  2. If the registry still holds MaxKeys keys, the least recently seen key is
//     evicted: a key at the old end whose flag is set is seen now and moved to
//     the new end instead (a second chance), and the first key found without
//     its flag is evicted. Each key gets at most one second chance per
//     insertion, so Gets that keep every flag set cannot stall it.
//  3. The new key joins the new end, seen now.
//
// This is the second-chance (CLOCK) approximation of least-recently-used
// order, at the cost of a flag per Get. A key used within IdleAfter is never
// evicted as idle; an idle key is evicted at the first insertion once
// IdleAfter has passed since the registry last saw it used, which is between
// IdleAfter and about 2×IdleAfter after its last use when new keys keep
// arriving. No goroutine
// sweeps in the background: with no new keys, idle keys stay until one comes
// (they are bounded by MaxKeys all the same). When every key is in use, the
// registry still evicts one rather than refuse the new key: a bound that holds
// whatever the key stream beats failing the call of a key it has no room for,
// and the evicted key's state is rebuilt by its next Get.
//
// A caller that got a key's value keeps a working value after the key is
// evicted: V is just a value it holds. The next Get of that key builds a fresh
// one with New.
//
// # Concurrency
//
// A Registry is safe for concurrent use. Get reads, without a lock, an
// immutable copy of the map of keys held, and loads the key's flags: a held
// key costs a map lookup and an atomic load. One mutex guards the
// authoritative map, the queue and the keys being built; it is never held
// while New or OnEvict runs. A Get the copy cannot serve (a key inserted since
// the copy was made, or one not held) takes the mutex; once there have been as
// many such Gets as keys held, the copy is remade, so its O(keys) cost is
// amortized over them, and a new hot key is served without the lock after at
// most MaxKeys slow Gets. Until then the copy may keep up to MaxKeys evicted
// values from being collected (marked gone, they are never returned). The
// zero Registry is not usable: build one with [New].
type Registry[K comparable, V any] struct {
	// Immutable after New.
	create    func(K) (V, error) // Config.New; nil only in a Registry New did not build
	onEvict   func(K, V)         // Config.OnEvict, may be nil
	maxKeys   int                // Config.MaxKeys with its default: positive
	idleAfter time.Duration      // Config.IdleAfter with its default: positive
	clock     clockwork.Clock    // nil for real time

	// read is a copy of held that Get reads without a lock. It may lack the
	// keys inserted since it was made, and hold entries evicted since, which
	// are marked gone. It is replaced, never modified, with mu held.
	read atomic.Pointer[map[K]*entry[K, V]]

	mu      sync.Mutex               // guards the fields below, and the seen time and links of every entry
	held    map[K]*entry[K, V]       // the keys held
	queue   queue.List[*entry[K, V]] // the keys held, from the one seen longest ago to the newest
	pending map[K]*flight[V]         // the keys whose New is running, and what their waiters receive
	misses  int                      // the Gets read could not serve since it was made (see missed)
}

// flight is one call of New for a key, shared by the Gets that wait for it.
// Its fields are written before done is closed and read after.
type flight[V any] struct {
	done  chan struct{}
	v     V
	err   error
	retry bool // New panicked or exited its goroutine: waiters start over
}

// notBuilt is the panic of every use of a Registry that [New] did not build.
const notBuilt = "registry: Registry used without registry.New (its zero value is not usable)"

// New returns an empty registry configured by cfg, or an error naming every
// impossible setting in cfg.
func New[K comparable, V any](cfg Config[K, V]) (*Registry[K, V], error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	r := &Registry[K, V]{
		create:    cfg.New,
		onEvict:   cfg.OnEvict,
		maxKeys:   cfg.MaxKeys,
		idleAfter: cfg.IdleAfter,
		clock:     cfg.Clock,
		held:      make(map[K]*entry[K, V]),
		pending:   make(map[K]*flight[V]),
	}
	r.read.Store(&map[K]*entry[K, V]{})
	return r, nil
}

// Get returns the value of key, building it with Config.New if the registry
// does not hold the key: on its first use, or its first use after an eviction.
// For a key it holds, Get reads no clock and allocates nothing, and takes no
// lock once the key is in the registry's lock-free copy (see Concurrency in
// [Registry]).
//
// Concurrent Gets of a key being built wait for the one call of New and return
// its result. If New returns an error, Get returns the zero V and that error,
// and nothing is stored: the next Get calls New again. If New panics, the panic
// reaches the Get that called it, and the Gets that were waiting start over as
// if they had just arrived. Inserting a new key may evict others (see
// [Registry]); Get calls Config.OnEvict for each before it returns. A panic in
// OnEvict reaches this Get's caller, and the keys left to report are not
// reported.
func (r *Registry[K, V]) Get(key K) (V, error) {
	if read := r.read.Load(); read != nil { // nil only in a Registry New did not build
		if e := (*read)[key]; e != nil {
			if v, ok := e.use(); ok {
				return v, nil
			}
		}
	}
	return r.getSlow(key)
}

// getSlow is Get of a key that read does not serve: it returns the key's value
// if the key is held (inserted since read was made), waits for the New of
// another Get, or runs New itself.
func (r *Registry[K, V]) getSlow(key K) (V, error) {
	if r.create == nil {
		panic(notBuilt)
	}
	for {
		r.mu.Lock()
		if e := r.held[key]; e != nil {
			e.state.Or(used)
			r.missed()
			r.mu.Unlock()
			return e.v, nil
		}
		if f := r.pending[key]; f != nil {
			r.mu.Unlock()
			<-f.done
			if f.retry {
				continue
			}
			return f.v, f.err
		}
		f := &flight[V]{done: make(chan struct{})}
		r.pending[key] = f
		r.mu.Unlock()
		return r.build(key, f)
	}
}

// build runs New for key as flight f, inserts the value it returns, hands the
// result to f's waiters and reports the keys that the insertion evicted.
func (r *Registry[K, V]) build(key K, f *flight[V]) (V, error) {
	returned := false
	defer func() {
		if !returned { // New panicked or called runtime.Goexit: the key stays free
			r.mu.Lock()
			delete(r.pending, key)
			r.mu.Unlock()
			f.retry = true
			close(f.done)
		}
	}()
	v, err := r.create(key)
	returned = true
	var now time.Time
	if err != nil {
		var zero V
		v = zero
	} else {
		now = r.now() // before the lock: Clock.Now is the caller's code too
	}

	var evicted []*entry[K, V]
	r.mu.Lock()
	delete(r.pending, key)
	if err == nil {
		if q, ok := r.queue.Back(); ok && now.Before(q.seen) {
			now = q.seen // overtaken by a concurrent insertion: keep the queue in order
		}
		evicted = r.makeRoom(now)
		e := &entry[K, V]{key: key, v: v, seen: now}
		r.queue.PushBack(e)
		r.held[key] = e
		r.missed()
	}
	r.mu.Unlock()

	f.v, f.err = v, err
	close(f.done)
	if r.onEvict != nil {
		for _, e := range evicted {
			r.onEvict(e.key, e.v)
		}
	}
	return v, err
}

// Len returns the number of keys the registry holds: at most Config.MaxKeys.
// Keys whose New is still running are not counted.
func (r *Registry[K, V]) Len() int {
	if r.create == nil {
		panic(notBuilt)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.queue.Len()
}

// Range calls f for every key the registry held when Range was called, with
// its value, from the key seen most recently to the key seen longest ago (see
// [Registry]), until f returns false. It is meant for health endpoints and
// debugging: it does not count as a use, so it keeps no key from going idle,
// and f runs with no lock held, so it may call any method of the registry.
// Range allocates a copy of the list of keys. Its signature lets a registry be
// ranged over directly: for key, v := range reg.Range.
func (r *Registry[K, V]) Range(f func(K, V) bool) {
	if r.create == nil {
		panic(notBuilt)
	}
	r.mu.Lock()
	held := make([]*entry[K, V], 0, r.queue.Len())
	for e, ok := r.queue.Back(); ok; e, ok = queue.Prev(e) {
		held = append(held, e)
	}
	r.mu.Unlock()
	for _, e := range held {
		if !f(e.key, e.v) {
			return
		}
	}
}

// missed records, with mu held, a Get that read could not serve: of a key
// held or inserted since read was made. Once there have been as many as the
// keys held, it replaces read with a copy of held, so that a copy, which costs
// O(keys), is amortized over as many slow Gets, and the evicted entries that
// read still holds (fewer than MaxKeys) are let go.
func (r *Registry[K, V]) missed() {
	r.misses++
	if r.misses >= len(r.held) {
		read := maps.Clone(r.held)
		r.read.Store(&read)
		r.misses = 0
	}
}

// now reads the registry's clock.
func (r *Registry[K, V]) now() time.Time {
	if r.clock == nil {
		return time.Now()
	}
	return r.clock.Now()
}

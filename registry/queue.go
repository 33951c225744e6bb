package registry

import (
	"sync/atomic"
	"time"

	"github.com/resilience-go/pipeline/internal/queue"
)

// entry is one key the registry holds, or held. key and v never change;
// state is the only field Get touches.
type entry[K comparable, V any] struct {
	// state holds the flags used and gone. Get sets used; an insertion that
	// sees it set clears it, with Registry.mu held (see Registry). Get loads
	// state before it stores, so that the Gets of a hot key only read its cache
	// line and do not fight over it. gone is set, with Registry.mu held, when
	// the key is evicted, and never cleared.
	state atomic.Uint32
	key   K
	v     V

	// Guarded by Registry.mu.
	seen  time.Time // the insertion of the key, or the last insertion that found used set
	links queue.Links[*entry[K, V]]
}

// Links is e's place in the registry's queue.
func (e *entry[K, V]) Links() *queue.Links[*entry[K, V]] { return &e.links }

// The flags of entry.state.
const (
	used uint32 = 1 << iota // Get returned the value since the key was last seen
	gone                    // the key was evicted: Get must not return this value
)

// use marks e used and returns its value, or reports that e is gone.
func (e *entry[K, V]) use() (v V, ok bool) {
	s := e.state.Load()
	if s&gone != 0 {
		return v, false
	}
	if s&used == 0 {
		e.state.Or(used)
	}
	return e.v, true
}

// makeRoom prepares the insertion of a new key at now, with r.mu held: it
// evicts the idle keys, then the least recently seen key if the registry is
// still full, as the Registry doc describes, and returns the evicted entries
// in the order it evicted them. Its cost is amortized: every key it moves
// consumes a used flag that a Get set.
func (r *Registry[K, V]) makeRoom(now time.Time) (evicted []*entry[K, V]) {
	q := &r.queue
	for e, ok := q.Front(); ok && now.Sub(e.seen) >= r.idleAfter; e, ok = q.Front() {
		if e.state.Load()&used != 0 {
			r.seenNow(e, now) // at the new end, with seen = now: the loop ends there
		} else {
			evicted = append(evicted, r.evict(e))
		}
	}
	for chances := q.Len(); q.Len() >= r.maxKeys; chances-- {
		if e, _ := q.Front(); chances > 0 && e.state.Load()&used != 0 {
			r.seenNow(e, now)
		} else {
			evicted = append(evicted, r.evict(e))
		}
	}
	return evicted
}

// seenNow records, with r.mu held, that e was used since it was last seen:
// its flag is cleared and it moves to the new end, seen at now.
func (r *Registry[K, V]) seenNow(e *entry[K, V], now time.Time) {
	e.state.And(^used)
	e.seen = now
	r.queue.Remove(e)
	r.queue.PushBack(e)
}

// evict removes e from the registry, with r.mu held, and returns it. Marked
// gone, e is no longer served from read.
func (r *Registry[K, V]) evict(e *entry[K, V]) *entry[K, V] {
	e.state.Or(gone)
	r.queue.Remove(e)
	delete(r.held, e.key)
	return e
}

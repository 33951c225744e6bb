package registry

import (
	"sync/atomic"
	"time"
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
	seen         time.Time // the insertion of the key, or the last insertion that found used set
	older, newer *entry[K, V]
}

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

// queue is a doubly linked list of entries ordered by seen, from the oldest to
// the newest. Its owner serializes every call.
type queue[K comparable, V any] struct {
	oldest, newest *entry[K, V]
	n              int // the number of entries
}

// pushNewest adds e, which is in no queue, at the new end.
func (q *queue[K, V]) pushNewest(e *entry[K, V]) {
	e.older, e.newer = q.newest, nil
	if q.newest != nil {
		q.newest.newer = e
	} else {
		q.oldest = e
	}
	q.newest = e
	q.n++
}

// remove takes e, which is in q, out of q.
func (q *queue[K, V]) remove(e *entry[K, V]) {
	if e.older != nil {
		e.older.newer = e.newer
	} else {
		q.oldest = e.newer
	}
	if e.newer != nil {
		e.newer.older = e.older
	} else {
		q.newest = e.older
	}
	e.older, e.newer = nil, nil
	q.n--
}

// makeRoom prepares the insertion of a new key at now, with r.mu held: it
// evicts the idle keys, then the least recently seen key if the registry is
// still full, as the Registry doc describes, and returns the evicted entries
// in the order it evicted them. Its cost is amortized: every key it moves
// consumes a used flag that a Get set.
func (r *Registry[K, V]) makeRoom(now time.Time) (evicted []*entry[K, V]) {
	q := &r.queue
	for e := q.oldest; e != nil && now.Sub(e.seen) >= r.idleAfter; e = q.oldest {
		if e.state.Load()&used != 0 {
			r.seenNow(e, now) // at the new end, with seen = now: the loop ends there
		} else {
			evicted = append(evicted, r.evict(e))
		}
	}
	for chances := q.n; q.n >= r.maxKeys; chances-- {
		if e := q.oldest; chances > 0 && e.state.Load()&used != 0 {
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
	r.queue.remove(e)
	r.queue.pushNewest(e)
}

// evict removes e from the registry, with r.mu held, and returns it. Marked
// gone, e is no longer served from read.
func (r *Registry[K, V]) evict(e *entry[K, V]) *entry[K, V] {
	e.state.Or(gone)
	r.queue.remove(e)
	delete(r.held, e.key)
	return e
}

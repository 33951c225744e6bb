// Package discrete is the engine of the discrete-event simulations: the
// simulation package's runs (of calls and of concurrency limits) and the
// fleet's. Each run is one goroutine that takes its events in order of
// time from a Queue and, before each, moves one fake clock, which every
// breaker, budget, limiter and estimator of the run reads, to the event's
// time (Engine); its random draws come from streams seeded from its seed
// (Derive). What a process of the run does is the run's own.
package discrete

import "time"

// Queue is the events a run has scheduled, a binary heap ordered by their
// time and, at one time, by the order they were pushed, so that a run
// depends on nothing but its configuration and seed. It is written out
// rather than through container/heap so that no comparison goes through an
// interface (the race detector, under which the tests run, makes each such
// call costly), and push and pop allocate nothing once the heap has grown.
// The zero value is an empty queue.
type Queue[E any] struct {
	items []item[E]
	seq   uint64
}

type item[E any] struct {
	at  time.Duration
	seq uint64
	e   E
}

// before reports whether a comes before b.
func before[E any](a, b *item[E]) bool { return a.at < b.at || a.at == b.at && a.seq < b.seq }

// Len returns how many events are scheduled.
func (q *Queue[E]) Len() int { return len(q.items) }

// Push schedules e at at.
func (q *Queue[E]) Push(at time.Duration, e E) {
	q.seq++
	q.items = append(q.items, item[E]{at: at, seq: q.seq, e: e})
	h := q.items
	for i := len(h) - 1; i > 0; {
		parent := (i - 1) / 2
		if !before(&h[i], &h[parent]) {
			break
		}
		h[i], h[parent] = h[parent], h[i]
		i = parent
	}
}

// Pop removes and returns the earliest event and its time; ok is false
// when none is left.
func (q *Queue[E]) Pop() (at time.Duration, e E, ok bool) {
	h := q.items
	if len(h) == 0 {
		return 0, e, false
	}
	first := h[0]
	last := len(h) - 1
	h[0] = h[last]
	h[last] = item[E]{} // drop what the event holds
	h = h[:last]
	q.items = h
	for i := 0; ; {
		least, l, r := i, 2*i+1, 2*i+2
		if l < len(h) && before(&h[l], &h[least]) {
			least = l
		}
		if r < len(h) && before(&h[r], &h[least]) {
			least = r
		}
		if least == i {
			break
		}
		h[i], h[least] = h[least], h[i]
		i = least
	}
	return first.at, first.e, true
}

package simulation

import (
	"container/heap"
	"time"
)

// kind is what an event does.
type kind uint8

const (
	// evArrive: a process offers its next call.
	evArrive kind = iota + 1
	// evStart: a call starts an attempt (its first, or a retry after its backoff).
	evStart
	// evEnd: a copy of an attempt ends (the only copy, without hedging).
	evEnd
	// evHedge: an attempt's next hedge is due.
	evHedge
)

// event is one thing that happens at a point of virtual time. Events at the same
// time happen in the order they were scheduled (seq), which makes a run
// independent of anything but its configuration and seed.
type event struct {
	at   time.Duration
	seq  uint64
	tag  uint64 // the copy (evEnd) or the attempt (evHedge) it belongs to; see sim.stale
	id   int32  // the process (evArrive) or the call (evStart, evEnd, evHedge)
	kind kind
}

// queue is the run's pending events, a binary heap ordered by (at, seq) through
// container/heap. Push and pop do not allocate once the backing array has grown.
type queue struct {
	events []event
	seq    uint64
}

// push schedules an event of kind k for id, tagged tag, at time at.
func (q *queue) push(at time.Duration, k kind, id int32, tag uint64) {
	q.seq++
	q.events = append(q.events, event{at: at, seq: q.seq, tag: tag, id: id, kind: k})
	heap.Fix(q, len(q.events)-1) // sift the new last element up
}

// pop removes and returns the earliest event; ok is false when none is left.
func (q *queue) pop() (e event, ok bool) {
	if len(q.events) == 0 {
		return event{}, false
	}
	e = q.events[0]
	heap.Pop(q)
	return e, true
}

// Len, Less, Swap, Push and Pop implement heap.Interface; use push and pop.
func (q *queue) Len() int { return len(q.events) }

func (q *queue) Less(i, j int) bool {
	a, b := &q.events[i], &q.events[j]
	if a.at != b.at {
		return a.at < b.at
	}
	return a.seq < b.seq
}

func (q *queue) Swap(i, j int) { q.events[i], q.events[j] = q.events[j], q.events[i] }

// Push is not used: push appends and fixes the heap itself, without boxing.
func (q *queue) Push(any) { panic("simulation: queue.Push is not used") }

// Pop drops the last element, which heap.Pop has just moved there; pop has
// already read it, so nothing is boxed.
func (q *queue) Pop() any {
	q.events = q.events[:len(q.events)-1]
	return nil
}

package simulation

import (
	"time"

	"github.com/resilience-go/pipeline/internal/events"
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
// time happen in the order they were scheduled, which makes a run
// independent of anything but its configuration and seed.
type event struct {
	at   time.Duration
	tag  uint64 // the copy (evEnd) or the attempt (evHedge) it belongs to; see sim.stale
	id   int32  // the process (evArrive) or the call (evStart, evEnd, evHedge)
	kind kind
}

// queue is the run's pending events (see events.Queue).
type queue struct{ events.Queue[event] }

// push schedules an event of kind k for id, tagged tag, at time at.
func (q *queue) push(at time.Duration, k kind, id int32, tag uint64) {
	q.Push(at, event{at: at, tag: tag, id: id, kind: k})
}

// pop removes and returns the earliest event; ok is false when none is left.
func (q *queue) pop() (e event, ok bool) {
	_, e, ok = q.Pop()
	return e, ok
}

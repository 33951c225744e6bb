package simulate

import (
	"time"

	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/breaker"
)

// kind is what an event does.
type kind uint8

const (
	// evCall: a process offers its next call.
	evCall kind = iota + 1
	// evEnd: an attempt ends, and its process records it with the breaker.
	evEnd
	// evRound: a process publishes its report and reads the fleet's.
	evRound
	// evReply: a round trip to a Redis that takes time reaches it, and its
	// answer comes back (see redis.go).
	evReply
	// evRestart: a process is replaced by a new one (see restart.go).
	evRestart
)

// event is one thing that happens at a point of virtual time. Events at
// the same time happen in the order they were scheduled (seq).
type event struct {
	at   time.Duration
	seq  uint64
	proc int32
	// slot is, for evEnd, the attempt's index in run.pending; for evRound
	// and evReply, the id of the process they are of (its index in
	// run.hash), so that a restart, which gives the process a new id, ends
	// them; for evRestart, the restart's index in Report.Restarts.
	slot int32
	kind kind
}

// pending is an attempt in flight, waiting for its evEnd. Events carry its
// index rather than the attempt, so that the heap moves small values.
type pending struct {
	b       *breaker.Breaker // that admitted it: a restart replaces the process's
	ticket  breaker.Ticket   // the attempt's admission
	verdict outcome.Verdict  // how it ends
	took    time.Duration    // how long it takes
}

// queue is the run's pending events, a binary heap ordered by (at, seq),
// written out rather than through container/heap so that no comparison goes
// through an interface: the race detector, under which CI runs the tests,
// makes every call of the heap's methods costly.
type queue struct {
	events []event
	seq    uint64
}

// before reports whether a comes before b.
func before(a, b *event) bool { return a.at < b.at || a.at == b.at && a.seq < b.seq }

// push schedules e at e.at.
func (q *queue) push(e event) {
	q.seq++
	e.seq = q.seq
	q.events = append(q.events, e)
	h := q.events
	for i := len(h) - 1; i > 0; {
		parent := (i - 1) / 2
		if !before(&h[i], &h[parent]) {
			break
		}
		h[i], h[parent] = h[parent], h[i]
		i = parent
	}
}

// pop removes and returns the earliest event; ok is false when none is left.
func (q *queue) pop() (e event, ok bool) {
	h := q.events
	if len(h) == 0 {
		return event{}, false
	}
	e = h[0]
	last := len(h) - 1
	h[0] = h[last]
	h = h[:last]
	q.events = h
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
	return e, true
}

package simulation

import (
	"time"

	"github.com/resilience-go/pipeline/internal/discrete"
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

// event is one thing that happens at a point of virtual time (which the
// engine keeps beside it). Events at the same time happen in the order they
// were scheduled, which makes a run independent of anything but its
// configuration and seed.
type event struct {
	tag  uint64 // the copy (evEnd) or the attempt (evHedge) it belongs to; see sim.stale
	id   int32  // the process (evArrive) or the call (evStart, evEnd, evHedge)
	kind kind
}

// engine is a run's virtual time and events (see discrete.Engine).
type engine struct{ discrete.Engine[event] }

// push schedules an event of kind k for id, tagged tag, at time at.
func (g *engine) push(at time.Duration, k kind, id int32, tag uint64) {
	g.Schedule(at, event{tag: tag, id: id, kind: k})
}

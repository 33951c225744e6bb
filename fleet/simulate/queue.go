package simulate

import (
	"time"

	"github.com/resilience-go/pipeline/internal/discrete"
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
// the same time happen in the order they were scheduled.
type event struct {
	at   time.Duration
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

// engine is a run's virtual time and events (see discrete.Engine).
type engine struct{ discrete.Engine[event] }

// push schedules e at e.at.
func (g *engine) push(e event) { g.Schedule(e.at, e) }

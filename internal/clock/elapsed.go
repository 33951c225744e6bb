// Package clock reads the clocks the library's shared state is timed by, and
// lets the stages of one call share a reading.
package clock

import (
	"sync/atomic"
	"time"

	"github.com/jonboulle/clockwork"
)

// Elapsed reads a clock as the time since its epoch, never less than zero.
// The epoch is the clock's reading at Start (at the state's construction),
// or at the first reading if there was no Start. A first reading that comes
// before the epoch moves the epoch back to it: the state was built in one
// time domain and is used in another whose time is behind (built outside a
// synctest bubble, whose time starts at 2000-01-01, and called inside it),
// and it is timed on the clock of the calls it serves. A later reading
// earlier than the epoch (a fake clock set back) counts as the epoch itself:
// the state stands still until the clock catches up, and no duration
// derived from it runs backwards.
//
// The zero Elapsed reads real time through the monotonic clock alone (half
// the cost of time.Now). Set Clock before Start and the first reading;
// Elapsed is safe for concurrent use and must not be copied after either.
type Elapsed struct {
	Clock clockwork.Clock // nil for real time
	epoch atomic.Pointer[mark]
	read  atomic.Bool // a reading has been taken: the epoch is final
}

// mark is an epoch: the clock's time then, and the same instant as a
// reading (Read).
type mark struct {
	at time.Time
	r  time.Duration
}

// Start fixes the epoch at the clock's reading now.
func (e *Elapsed) Start() { e.epoch.Store(e.mark()) }

// Read returns the time since the epoch, at least 0.
func (e *Elapsed) Read() time.Duration {
	p := e.epoch.Load()
	if p == nil {
		p = e.rebase(nil)
	}
	d := Since(e.Clock, p.at) // rather than Read: a fake clock far from Epoch keeps its range
	if !e.read.Load() {
		return e.first(p, d, Read(e.Clock))
	}
	return max(d, 0)
}

// From returns what Read would have returned when r, a reading of e's clock
// (Read), was taken, without reading the clock again (but for the one
// reading that fixes a missing or moved epoch).
func (e *Elapsed) From(r time.Duration) time.Duration {
	p := e.epoch.Load()
	if p == nil {
		p = e.rebase(nil)
	}
	return e.since(p, r)
}

// since is the time from the epoch p to the reading r.
func (e *Elapsed) since(p *mark, r time.Duration) time.Duration {
	d := Sub(r, p.r)
	if !e.read.Load() {
		return e.first(p, d, r)
	}
	return max(d, 0)
}

// first is the first reading d from the epoch p, r as a reading (Read): if
// it comes before p, the epoch moves back to the clock's reading now.
func (e *Elapsed) first(p *mark, d, r time.Duration) time.Duration {
	if d < 0 { // the first reading, from a domain behind the epoch's
		p = e.rebase(p)
		d = Sub(r, p.r)
	}
	e.read.Store(true)
	return max(d, 0)
}

// Epoch returns the epoch, taking it now if there is none yet: the time a
// reading of d stands for is Epoch().Add(d).
func (e *Elapsed) Epoch() time.Time {
	p := e.epoch.Load()
	if p == nil {
		p = e.rebase(nil)
	}
	return p.at
}

// rebase moves the epoch from old to the clock's reading now, unless
// another reading moved it first, and returns the epoch.
func (e *Elapsed) rebase(old *mark) *mark {
	m := e.mark()
	if e.epoch.CompareAndSwap(old, m) {
		return m
	}
	return e.epoch.Load()
}

// mark reads the clock once, as a time and as a reading.
func (e *Elapsed) mark() *mark {
	at := Now(e.Clock)
	return &mark{at: at, r: at.Sub(Epoch)}
}

// Package clock reads the clocks the library's shared state is timed by.
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
	epoch atomic.Pointer[time.Time]
	read  atomic.Bool // a reading has been taken: the epoch is final
}

// Start fixes the epoch at the clock's reading now.
func (e *Elapsed) Start() {
	t := e.now()
	e.epoch.Store(&t)
}

// Read returns the time since the epoch, at least 0.
func (e *Elapsed) Read() time.Duration {
	p := e.epoch.Load()
	if p == nil {
		p = e.rebase(nil)
	}
	d := e.since(*p)
	if !e.read.Load() {
		if d < 0 { // the first reading, from a domain behind the epoch's
			p = e.rebase(p)
			d = max(e.since(*p), 0)
		}
		e.read.Store(true)
	}
	return max(d, 0)
}

// Epoch returns the epoch, taking it now if there is none yet: the time a
// reading of d stands for is Epoch().Add(d).
func (e *Elapsed) Epoch() time.Time {
	p := e.epoch.Load()
	if p == nil {
		p = e.rebase(nil)
	}
	return *p
}

// rebase moves the epoch from old to the clock's reading now, unless
// another reading moved it first, and returns the epoch.
func (e *Elapsed) rebase(old *time.Time) *time.Time {
	t := e.now()
	if e.epoch.CompareAndSwap(old, &t) {
		return &t
	}
	return e.epoch.Load()
}

func (e *Elapsed) now() time.Time {
	if e.Clock == nil {
		return time.Now()
	}
	return e.Clock.Now()
}

func (e *Elapsed) since(t time.Time) time.Duration {
	if e.Clock == nil {
		return time.Since(t)
	}
	return e.Clock.Since(t)
}

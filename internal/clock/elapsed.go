// Package clock reads the clocks the library's shared state is timed by.
package clock

import (
	"sync/atomic"
	"time"

	"github.com/jonboulle/clockwork"
)

// Elapsed reads a clock as the time since its first reading, never less
// than zero. The first reading, not the construction, fixes the epoch, so
// that state built in one time domain and used in another (a limiter built
// outside a synctest bubble and called inside it, where time.Now starts at
// 2000-01-01) is timed on the clock of the calls it serves. A reading
// earlier than the epoch (a fake clock set back, or a bubble whose time
// starts before the first one's reading) counts as the epoch itself: the
// state stands still until the clock catches up, and no duration derived
// from it runs backwards.
//
// The zero Elapsed reads real time through the monotonic clock alone (half
// the cost of time.Now). Set Clock before the first reading; Elapsed is safe
// for concurrent use and must not be copied after its first reading.
type Elapsed struct {
	Clock clockwork.Clock // nil for real time
	epoch atomic.Pointer[time.Time]
}

// Read returns the time since the first reading, at least 0.
func (e *Elapsed) Read() time.Duration {
	p := e.epoch.Load()
	if p == nil {
		p = e.start()
	}
	var d time.Duration
	if e.Clock == nil {
		d = time.Since(*p)
	} else {
		d = e.Clock.Since(*p)
	}
	return max(d, 0)
}

// Epoch returns the time of the first reading, taking it now if there has
// been none: the time a reading of d stands for is Epoch().Add(d).
func (e *Elapsed) Epoch() time.Time {
	p := e.epoch.Load()
	if p == nil {
		p = e.start()
	}
	return *p
}

// start fixes the epoch at the clock's reading now, unless another reading
// fixed it first, and returns it.
func (e *Elapsed) start() *time.Time {
	var t time.Time
	if e.Clock == nil {
		t = time.Now()
	} else {
		t = e.Clock.Now()
	}
	if e.epoch.CompareAndSwap(nil, &t) {
		return &t
	}
	return e.epoch.Load()
}

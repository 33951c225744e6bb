package clock

import (
	"math"
	"sync/atomic"
	"time"

	"github.com/jonboulle/clockwork"
)

// Epoch is the instant every reading is measured from: a reading is a
// clock's time since Epoch, so that the stages of one call, each timed on
// its own epoch, can share one reading of the clock they have in common and
// convert it (Elapsed.From, callctx.Schedule.At) rather than each read it again.
var Epoch = time.Now()

// Read reads c (nil for real time) as its time since Epoch. On real time it
// reads the monotonic clock alone (time.Since), half the cost of time.Now.
// Inside a testing/synctest bubble, whose time has no monotonic reading and
// starts at 2000-01-01, a reading on real time is negative, and differences of
// readings are still durations.
func Read(c clockwork.Clock) time.Duration { return Since(c, Epoch) }

// Since is c's time since t (nil c: real time), counted as Read is.
func Since(c clockwork.Clock, t time.Time) time.Duration {
	if n := reads.Load(); n != nil {
		n.Add(1)
	}
	if c == nil {
		return time.Since(t)
	}
	return c.Since(t)
}

// Now is c's time now (nil for real time): time.Now or c.Now, counted as
// Read is.
func Now(c clockwork.Clock) time.Time {
	if n := reads.Load(); n != nil {
		n.Add(1)
	}
	if c == nil {
		return time.Now()
	}
	return c.Now()
}

// Sub is a-b, saturated at the most and least a Duration holds, as
// time.Time.Sub is: readings of a fake clock far from Epoch, moved by a
// test as far as a Duration goes, would overflow.
func Sub(a, b time.Duration) time.Duration {
	d := a - b
	switch {
	case b < 0 && d < a:
		return math.MaxInt64
	case b > 0 && d > a:
		return math.MinInt64
	}
	return d
}

// reads counts the readings of Read and Now while a test counts them.
var reads atomic.Pointer[atomic.Int64]

// Count counts every reading of Read and Now, on any goroutine, until the
// function it returns is called, which returns the count. It is for tests
// that hold the library to a number of readings; counts do not nest.
func Count() (stop func() int64) {
	n := new(atomic.Int64)
	reads.Store(n)
	return func() int64 {
		reads.CompareAndSwap(n, nil)
		return n.Load()
	}
}

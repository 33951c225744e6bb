package callctx

import (
	"runtime"
	"sync"
	"time"
	"weak"

	"github.com/jonboulle/clockwork"

	"github.com/resilience-go/pipeline/internal/clock"
)

// Schedule calls each of its entries when it falls due, with one runtime
// timer for all of them. A stage whose calls each need something done at a
// time (a timeout expiring a context, a hedge sending its copy) adds an entry
// per call as the call starts and removes it as the call ends; the calls of
// one stage wait about as long, so entries arrive nearly in the order they
// fall due, and the schedule keeps them in a list, the earliest first, where
// an entry is added in a step or two from the tail.
//
// The timer stays armed for the earliest time it was set for even when that
// entry leaves first: a later entry finds it armed early enough and arms
// nothing. When it fires, it calls what is due and re-arms for the earliest
// entry left, if any. So a stage that serves one call after another re-arms
// the runtime timer about once per wait, not once per call: arming a runtime
// timer per call is what makes a deadline expensive on a network call,
// because the runtime wakes its network poller for every new earliest timer.
//
// Inside a testing/synctest bubble, whose clock a timer made outside it does
// not follow, each entry gets a runtime timer of its own. A bubble's clock
// has no monotonic reading: that is how the schedule tells.
//
// A Schedule is safe for concurrent use.
type Schedule struct {
	clock clockwork.Clock // nil: the real clock
	base  time.Time       // entries' times are durations since base
	off   time.Duration   // base as a reading (clock.Read)

	mu         sync.Mutex // guards every field below and the entries' links
	head, tail *Entry
	timer      clockwork.Timer // made on first use
	armed      time.Duration   // when the timer fires, since base; 0: idle
}

// Due is what an entry's owner does when the entry falls due: it is called on
// the schedule's timer goroutine, with no lock held, and must not block.
type Due interface{ Due() }

// Entry is one place on a schedule. Embed it in what needs it, and add it
// with [Schedule.Add]; it is on one schedule at a time, and its zero value is
// off every schedule.
type Entry struct {
	owner      Due
	when       time.Duration // since the schedule's base
	prev, next *Entry
	sched      *Schedule
	linked     bool
	own        *time.Timer // inside a synctest bubble: the entry's own timer
}

// NewSchedule returns a schedule on clock (nil: the real clock).
func NewSchedule(c clockwork.Clock) *Schedule {
	s := &Schedule{clock: c}
	s.base = clock.Now(c).Add(-time.Nanosecond) // so that no entry is due at 0
	s.off = s.base.Sub(clock.Epoch)
	return s
}

// Now is the schedule's clock's time: At of a reading taken now.
func (s *Schedule) Now() time.Time { return s.At(clock.Read(s.clock)) }

// At is the schedule's clock's time at r, a reading of that clock
// (clock.Read), without reading it again. On real time it is the base's
// time plus the time elapsed since, so that it carries a monotonic reading,
// and a step of the system's clock since the schedule was made does not
// move it; the context package and net/http measure what is left of a
// deadline on the monotonic clock, as the schedule does.
//
// Inside a testing/synctest bubble, a base made outside it is later than
// the bubble's clock, and the elapsed time comes out negative: At is then
// the bubble's time, which has no monotonic reading, as Add expects.
func (s *Schedule) At(r time.Duration) time.Time {
	if d := clock.Sub(r, s.off); d >= 0 || s.clock != nil {
		return s.base.Add(d)
	}
	return clock.Epoch.Add(r).Round(0)
}

// Add schedules e to call owner.Due at the time at; now is the schedule's
// time. An entry that is still scheduled must be removed before it is added
// again.
func (s *Schedule) Add(e *Entry, owner Due, now, at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e.owner, e.sched, e.linked = owner, s, true
	if s.clock == nil && now == now.Round(0) { // inside a synctest bubble
		e.own = time.AfterFunc(at.Sub(now), func() { s.ownFired(e) })
		return
	}
	e.when = at.Sub(s.base)
	after := s.tail // insert after the last entry due no later than e
	for after != nil && after.when > e.when {
		after = after.prev
	}
	e.prev = after
	if after == nil {
		e.next, s.head = s.head, e
	} else {
		e.next, after.next = after.next, e
	}
	if e.next == nil {
		s.tail = e
	} else {
		e.next.prev = e
	}
	if s.armed == 0 || e.when < s.armed {
		s.arm(now, e.when)
	}
}

// arm sets the timer for when, since base. s.mu is held.
func (s *Schedule) arm(now time.Time, when time.Duration) {
	s.armed = when
	d := when - now.Sub(s.base)
	switch {
	case s.timer != nil:
		s.timer.Reset(d)
	case s.clock == nil:
		s.timer = realTimer{time.AfterFunc(d, s.fireWeakly())}
	default:
		s.timer = s.clock.AfterFunc(d, s.fireWeakly())
	}
	if now != now.Round(0) { // real time, outside any synctest bubble
		runtime.AddCleanup(s, stop, s.timer)
	}
}

// stop stops the timer of a schedule that was collected, so that the
// runtime drops the timer too instead of holding it until it fires. Only a
// timer of real time is stopped so: the cleanup runs on the runtime's own
// goroutine, which may not touch a timer of a testing/synctest bubble, and a
// fake clock's timers cost nothing the runtime holds.
func stop(t clockwork.Timer) { t.Stop() }

// fireWeakly returns the timer's function: fire, through a weak pointer to
// s. The timer stays armed after the last entry leaves (see Schedule), and
// through a strong pointer it would keep s, and whatever holds s (a stage,
// its pipeline, an HTTP host's whole scope), alive until it fires, up to a
// call's timeout after the last call: a transport that evicts hosts faster
// than that would hold every host evicted in the last timeout. Entries on
// the schedule hold it strongly, so it is collected only once no call uses
// it; the timer is then stopped (see stop), and finds nothing to do if it
// fires first.
func (s *Schedule) fireWeakly() func() {
	w := weak.Make(s)
	return func() {
		if s := w.Value(); s != nil {
			s.fire()
		}
	}
}

// Remove takes e off its schedule, reporting whether it was still on it: if
// not, its Due has been or is being called.
func (s *Schedule) Remove(e *Entry) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !e.linked {
		return false
	}
	e.linked = false
	if e.own != nil {
		e.own.Stop()
		e.own = nil
		return true
	}
	if e.prev == nil {
		s.head = e.next
	} else {
		e.prev.next = e.next
	}
	if e.next == nil {
		s.tail = e.prev
	} else {
		e.next.prev = e.prev
	}
	e.prev, e.next = nil, nil
	return true
}

// ownFired calls e's owner when e's own timer fires, unless e was removed.
func (s *Schedule) ownFired(e *Entry) {
	s.mu.Lock()
	if !e.linked {
		s.mu.Unlock()
		return
	}
	e.linked, e.own = false, nil
	owner := e.owner
	s.mu.Unlock()
	owner.Due()
}

// fire calls every entry that is due and re-arms for the earliest one left.
func (s *Schedule) fire() {
	s.mu.Lock()
	now := s.Now()
	since := now.Sub(s.base)
	var due *Entry // the entries due, linked through next
	for s.head != nil && s.head.when <= since {
		e := s.head
		s.head = e.next
		e.linked, e.prev, e.next = false, nil, due
		due = e
	}
	if s.head == nil {
		s.tail = nil
		s.armed = 0
	} else {
		s.head.prev = nil
		s.arm(now, s.head.when)
	}
	s.mu.Unlock()
	for due != nil {
		e := due
		due, e.next = e.next, nil
		e.owner.Due()
	}
}

// Len is the number of entries on the schedule's list (entries with timers
// of their own are not counted).
func (s *Schedule) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for e := s.head; e != nil; e = e.next {
		n++
	}
	return n
}

// realTimer is a *time.Timer as a clockwork.Timer.
type realTimer struct{ *time.Timer }

func (t realTimer) Chan() <-chan time.Time { return t.C }

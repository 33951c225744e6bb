package discrete

import (
	"time"

	"github.com/jonboulle/clockwork"
)

// Epoch is the wall-clock instant a run's virtual time 0 stands for.
var Epoch = time.Date(2000, time.January, 1, 0, 0, 0, 0, time.UTC)

// Derive returns the second PCG seed word of a run's stream for its
// index-th member (a process, say), mixed (SplitMix64's finalizer) so that
// nearby streams are unrelated: rand.NewPCG(seed, Derive(seed, stream, i)).
func Derive(seed, stream, index uint64) uint64 {
	z := seed ^ stream<<56 ^ index<<8 ^ 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// Engine is a run's virtual time and the events it has scheduled: Clock
// reads Epoch plus Now. Make one with New.
type Engine[E any] struct {
	Clock *clockwork.FakeClock
	Now   time.Duration
	queue Queue[E]
}

// New returns an engine at time 0 with no event scheduled.
func New[E any]() Engine[E] {
	return Engine[E]{Clock: clockwork.NewFakeClockAt(Epoch)}
}

// Schedule schedules e at at.
func (g *Engine[E]) Schedule(at time.Duration, e E) { g.queue.Push(at, e) }

// Next removes the earliest event for which stale (nil: none is) is false,
// dropping the stale ones before it without moving the clock, so that they
// change nothing, not even how long the run lasts, and moves the clock to
// its time, if that is later than Now. ok is false when none is left.
func (g *Engine[E]) Next(stale func(E) bool) (e E, ok bool) {
	for {
		var at time.Duration
		at, e, ok = g.queue.Pop()
		if !ok {
			return e, false
		}
		if stale != nil && stale(e) {
			continue
		}
		if at > g.Now {
			g.Clock.Advance(at - g.Now)
			g.Now = at
		}
		return e, true
	}
}

package callctx

import (
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/resilience-go/pipeline/internal/clock"
)

// counter is an entry's owner that counts its Due calls.
type counter struct {
	mu sync.Mutex
	n  int
}

func (c *counter) Due() { c.mu.Lock(); c.n++; c.mu.Unlock() }

func (c *counter) count() int { c.mu.Lock(); defer c.mu.Unlock(); return c.n }

// The schedule calls exactly the entries that are due, once each, whatever
// the order of adds, removes and clock advances: checked against a model
// that knows only when each entry was due. The cases run in a synctest
// bubble, so that after an advance synctest.Wait waits for the fake clock's
// callbacks exactly, not for a real-time deadline a busy machine may miss.
func TestScheduleCallsWhatIsDue(t *testing.T) {
	// rapid reads a *testing.T's deadline, which a bubble forbids: it is
	// handed the test behind another type.
	synctest.Test(t, func(t *testing.T) { scheduleCallsWhatIsDue(struct{ *testing.T }{t}) })
}

func scheduleCallsWhatIsDue(t rapid.TB) {
	rapid.Check(t, func(rt *rapid.T) {
		clock := clockwork.NewFakeClock()
		s := NewSchedule(clock)
		const n = 6
		var entries [n]Entry
		var owners [n]counter
		var want [n]int
		var due [n]time.Time // zero: not on the schedule
		rt.Repeat(map[string]func(*rapid.T){
			"add": func(rt *rapid.T) {
				i := rapid.IntRange(0, n-1).Draw(rt, "i")
				if !due[i].IsZero() {
					rt.Skip("already scheduled")
				}
				now := clock.Now()
				due[i] = now.Add(time.Duration(rapid.IntRange(1, 100).Draw(rt, "ms")) * time.Millisecond)
				s.Add(&entries[i], &owners[i], now, due[i])
			},
			"remove": func(rt *rapid.T) {
				i := rapid.IntRange(0, n-1).Draw(rt, "i")
				assert.Equal(rt, !due[i].IsZero(), s.Remove(&entries[i]), "entry %d", i)
				due[i] = time.Time{}
			},
			"advance": func(rt *rapid.T) {
				clock.Advance(time.Duration(rapid.IntRange(0, 60).Draw(rt, "ms")) * time.Millisecond)
				now := clock.Now()
				for i := range due {
					if !due[i].IsZero() && !due[i].After(now) {
						want[i]++
						due[i] = time.Time{}
					}
				}
				synctest.Wait() // the fake clock calls the schedule on a goroutine
				for i := range owners {
					require.Equal(rt, want[i], owners[i].count(), "entry %d", i)
				}
			},
			"": func(rt *rapid.T) {
				left := 0
				for i := range due {
					if !due[i].IsZero() {
						left++
					}
				}
				assert.Equal(rt, left, s.Len())
			},
		})
	})
}

// A stage that serves one call after another re-arms its timer about once
// per wait, not once per call: entries that leave before they fall due leave
// the timer armed, and the next entry finds it armed early enough.
func TestScheduleArmsOncePerWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewSchedule(clockwork.NewRealClock()) // a bubble's timers, on the list
		var e Entry
		var o counter
		armed := 0
		last := time.Duration(0)
		for range 1000 {
			now := s.Now()
			s.Add(&e, &o, now, now.Add(time.Second))
			s.mu.Lock()
			if s.armed != last {
				armed++
				last = s.armed
			}
			s.mu.Unlock()
			time.Sleep(10 * time.Millisecond) // virtual: the call's work
			require.True(t, s.Remove(&e))
		}
		assert.Zero(t, o.count(), "no entry stayed until it was due")
		assert.LessOrEqual(t, armed, 11, "1000 calls of 10 ms under a 1 s wait re-arm about once a second")
	})
}

// In a synctest bubble an entry of a schedule on the real clock gets a timer
// of its own, which follows the bubble's clock.
func TestScheduleInABubbleFollowsItsClock(t *testing.T) {
	s := NewSchedule(nil)
	synctest.Test(t, func(t *testing.T) {
		var early, late Entry
		var a, b counter
		now := s.Now()
		s.Add(&early, &a, now, now.Add(time.Second))
		s.Add(&late, &b, now, now.Add(time.Hour))
		time.Sleep(2 * time.Second)
		synctest.Wait()
		assert.Equal(t, 1, a.count())
		assert.False(t, s.Remove(&early), "a called entry is off the schedule")
		assert.True(t, s.Remove(&late))
		time.Sleep(2 * time.Hour)
		synctest.Wait()
		assert.Zero(t, b.count(), "a removed entry is not called")
	})
}

// On real time the schedule reads the monotonic clock alone: its times carry a
// monotonic reading, and they are time.Now's to within the two reads.
func TestScheduleNowIsRealTime(t *testing.T) {
	s := NewSchedule(nil)
	before := time.Now()
	now := s.Now()
	after := time.Now()
	assert.NotEqual(t, now, now.Round(0), "a monotonic reading")
	assert.False(t, now.Before(before) || now.After(after), "%v outside [%v, %v]", now, before, after)
	assert.WithinDuration(t, before, now.Round(0), time.Second, "the wall reading follows too")
}

// At is Now at a reading taken earlier: on real time with a monotonic
// reading, in a bubble without one (the bubble's time), and on a fake
// clock the fake time itself.
func TestScheduleAtIsNowAtAReading(t *testing.T) {
	s := NewSchedule(nil)
	before := time.Now()
	at := s.At(clock.Read(nil))
	assert.NotEqual(t, at, at.Round(0), "a monotonic reading")
	assert.False(t, at.Before(before) || at.After(s.Now()))

	synctest.Test(t, func(t *testing.T) {
		at := s.At(clock.Read(nil))
		assert.Equal(t, at, at.Round(0), "no monotonic reading in a bubble")
		assert.True(t, at.Equal(time.Now()), "the bubble's time: %v", at)
	})

	fake := clockwork.NewFakeClock()
	f := NewSchedule(fake)
	fake.Advance(time.Hour)
	r := clock.Read(fake)
	fake.Advance(time.Minute)
	assert.True(t, f.At(r).Equal(fake.Now().Add(-time.Minute)))
	assert.True(t, f.Now().Equal(fake.Now()))
}

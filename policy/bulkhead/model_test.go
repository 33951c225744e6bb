package bulkhead_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"pgregory.net/rapid"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/criticality"
	"github.com/resilience-go/pipeline/internal/giveway"
	"github.com/resilience-go/pipeline/policy/bulkhead"
)

// call is one call of the model test: a goroutine that acquires a slot, holds
// it until told to leave, and releases it.
type call struct {
	cancel context.CancelFunc
	result chan error    // what Acquire returned
	leave  chan struct{} // closed to release the slot
	left   chan struct{} // closed once released
	err    error
	done   bool // Acquire returned
}

// machine drives a real bulkhead, inside a synctest bubble, and a model of it:
// who holds a slot and who waits, in order.
type machine struct {
	b        *bulkhead.Bulkhead
	limit    int
	maxQueue int
	maxWait  time.Duration
	shares   criticality.Shares
	gate     giveway.Gate // the model's own: the levels that give way
	calls    []*call
	holders  []int     // model: calls holding a slot
	queue    []waiting // model: calls waiting, oldest first
	// ceiling is the most calls that may be inside: the limit, or more for a
	// while after the limit was lowered under the calls already inside.
	ceiling int
	now     time.Duration
	start   time.Time
}

func newMachine(cfg bulkhead.Config) *machine {
	b, err := bulkhead.New(cfg)
	if err != nil {
		panic(err)
	}
	m := &machine{b: b, limit: cfg.MaxConcurrent, ceiling: cfg.MaxConcurrent, maxQueue: cfg.MaxQueue, maxWait: cfg.MaxWait, shares: cfg.Shares, gate: giveway.New(cfg.Shares), start: time.Now()}
	if m.maxWait == 0 {
		m.maxWait = bulkhead.DefaultMaxWait
	}
	return m
}

// waiting is a call of the model's queue.
type waiting struct {
	id      int
	level   criticality.Level
	expires time.Duration
}

// first is the index in m.queue of the call served next: the oldest of the
// highest level; -1 if none waits.
func (m *machine) first() int {
	at := -1
	for i, w := range m.queue {
		if at < 0 || w.level > m.queue[at].level {
			at = i
		}
	}
	return at
}

// last is the index of the call served last: the newest of the lowest
// level; -1 if none waits.
func (m *machine) last() int {
	at := -1
	for i, w := range m.queue {
		if at < 0 || w.level <= m.queue[at].level {
			at = i
		}
	}
	return at
}

// fits reports whether a call of level l may take a slot when used are
// taken, now.
func (m *machine) fits(l criticality.Level, used int) bool {
	return m.gate.Admits(l, float64(used), float64(m.limit), m.now)
}

// Arrive starts a call of level l.
func (m *machine) Arrive(l criticality.Level) {
	ctx, cancel := context.WithCancel(criticality.With(context.Background(), l))
	c := &call{cancel: cancel, result: make(chan error, 1), leave: make(chan struct{}), left: make(chan struct{})}
	id := len(m.calls)
	m.calls = append(m.calls, c)
	go func() {
		err := m.b.Acquire(ctx)
		c.result <- err
		if err == nil {
			<-c.leave
			m.b.Release()
		}
		close(c.left)
	}()
	ahead := slices.ContainsFunc(m.queue, func(w waiting) bool { return w.level >= l })
	switch {
	case m.fits(l, len(m.holders)) && !ahead:
		m.holders = append(m.holders, id)
	case len(m.queue) < m.maxQueue:
		m.queue = append(m.queue, waiting{id, l, m.now + m.maxWait})
	case m.last() >= 0 && m.queue[m.last()].level < l: // it takes the place of the last
		m.gate.Refused(m.queue[m.last()].level, m.now)
		m.queue = slices.Delete(m.queue, m.last(), m.last()+1)
		m.queue = append(m.queue, waiting{id, l, m.now + m.maxWait})
	default:
		m.gate.Refused(l, m.now)
	}
	synctest.Wait()
}

// Leave releases the slot of holder number pick (modulo their number).
func (m *machine) Leave(pick int) {
	if len(m.holders) == 0 {
		return
	}
	i := pick % len(m.holders)
	id := m.holders[i]
	holding := len(m.holders)
	m.holders = slices.Delete(m.holders, i, i+1)
	m.ceiling = max(m.limit, min(m.ceiling, len(m.holders)))
	close(m.calls[id].leave)
	if f := m.first(); f >= 0 && m.fits(m.queue[f].level, holding-1) {
		m.admitFirst()
	}
	synctest.Wait()
}

// Cancel cancels waiting call number pick (modulo their number).
func (m *machine) Cancel(pick int) {
	if len(m.queue) == 0 {
		return
	}
	i := pick % len(m.queue)
	m.calls[m.queue[i].id].cancel()
	m.queue = slices.Delete(m.queue, i, i+1)
	synctest.Wait()
}

// Resize moves the limit to n.
func (m *machine) Resize(n int) {
	m.limit = n
	m.ceiling = max(n, len(m.holders))
	m.b.SetLimit(m.limit)
	for f := m.first(); f >= 0 && m.fits(m.queue[f].level, len(m.holders)); f = m.first() {
		m.admitFirst()
	}
	synctest.Wait()
}

// Advance lets d pass: waits that run out are refused.
func (m *machine) Advance(d time.Duration) {
	time.Sleep(d)
	m.now += d
	expired := slices.DeleteFunc(slices.Clone(m.queue), func(w waiting) bool { return w.expires > m.now })
	slices.SortStableFunc(expired, func(a, b waiting) int { return int(a.expires - b.expires) })
	for _, w := range expired { // each gives way at its own instant
		m.gate.Refused(w.level, w.expires)
	}
	m.queue = slices.DeleteFunc(m.queue, func(w waiting) bool { return w.expires <= m.now })
	synctest.Wait()
}

// admitFirst gives the call served next a slot.
func (m *machine) admitFirst() {
	f := m.first()
	m.holders = append(m.holders, m.queue[f].id)
	m.queue = slices.Delete(m.queue, f, f+1)
}

// Check holds the bulkhead to the model: the same calls hold slots (so the
// queue serves higher levels first and, within a level, first come first
// served), the same number wait, and no more calls are inside than the
// limit allows, unless the limit was lowered under them.
func (m *machine) Check() string {
	for _, c := range m.calls {
		if !c.done {
			select {
			case c.err = <-c.result:
				c.done = true
			default:
			}
		}
	}
	for _, id := range m.holders {
		if c := m.calls[id]; !c.done || c.err != nil {
			return fmt.Sprintf("call %d should hold a slot; returned %v, err %v", id, c.done, c.err)
		}
	}
	for _, w := range m.queue {
		if m.calls[w.id].done {
			return fmt.Sprintf("call %d should wait; Acquire returned %v", w.id, m.calls[w.id].err)
		}
	}
	if got := m.b.InFlight(); got > m.ceiling {
		return fmt.Sprintf("%d calls inside, more than the limit %d allows", got, m.limit)
	}
	if got := m.b.InFlight(); got != len(m.holders) {
		return fmt.Sprintf("InFlight = %d, want %d", got, len(m.holders))
	}
	if got := m.b.Queued(); got != len(m.queue) {
		return fmt.Sprintf("Queued = %d, want %d", got, len(m.queue))
	}
	if m.b.Queued() > m.maxQueue {
		return fmt.Sprintf("%d queued, more than MaxQueue %d", m.b.Queued(), m.maxQueue)
	}
	for id, c := range m.calls {
		if c.done && c.err != nil && !slices.Contains(m.holders, id) {
			if _, ok := c.err.(*pipeline.StopError); !ok {
				return fmt.Sprintf("call %d: %v is not a StopError", id, c.err)
			}
		}
	}
	return ""
}

// finish lets every call go.
func (m *machine) finish() {
	for _, c := range m.calls {
		c.cancel()
		select {
		case <-c.leave:
		default:
			close(c.leave)
		}
	}
	for _, c := range m.calls {
		<-c.left
	}
}

// op is one step of a script: Arrive, Leave, Cancel, Resize or Advance, with
// its argument.
type op struct {
	kind string
	arg  int
}

// TestBulkheadMatchesModel runs random scripts of arrivals (of every
// level), departures, cancellations, limit changes and time passing against
// a real bulkhead with random shares,
// each script in a synctest bubble of its own, and holds it to the model
// after every step.
func TestBulkheadMatchesModel(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		cfg := bulkhead.Config{
			MaxConcurrent: rapid.IntRange(1, 4).Draw(rt, "slots"),
			MaxQueue:      rapid.IntRange(0, 4).Draw(rt, "queue"),
		}
		if rapid.Bool().Draw(rt, "shares") {
			d := rapid.Float64Range(0.1, 1).Draw(rt, "default")
			cfg.Shares = criticality.Shares{Default: d, Sheddable: rapid.Float64Range(0.1, d).Draw(rt, "sheddable")}
		}
		if cfg.MaxQueue > 0 {
			cfg.MaxWait = time.Duration(rapid.IntRange(1, 5).Draw(rt, "wait")) * time.Second
		}
		script := rapid.SliceOfN(rapid.Custom(func(rt *rapid.T) op {
			kind := rapid.SampledFrom([]string{"arrive", "arrive", "arrive", "leave", "leave", "cancel", "resize", "advance"}).Draw(rt, "kind")
			switch kind {
			case "resize":
				return op{kind, rapid.IntRange(1, 5).Draw(rt, "limit")}
			case "advance":
				return op{kind, rapid.IntRange(1, 3000).Draw(rt, "ms")}
			case "arrive":
				return op{kind, rapid.IntRange(int(criticality.Sheddable), int(criticality.Critical)).Draw(rt, "level")}
			}
			return op{kind, rapid.IntRange(0, 7).Draw(rt, "pick")}
		}), 1, 80).Draw(rt, "script")
		var msg string
		synctest.Test(t, func(*testing.T) {
			m := newMachine(cfg)
			defer m.finish()
			for i, o := range script {
				switch o.kind {
				case "arrive":
					m.Arrive(criticality.Level(o.arg))
				case "leave":
					m.Leave(o.arg)
				case "cancel":
					m.Cancel(o.arg)
				case "resize":
					m.Resize(o.arg)
				case "advance":
					m.Advance(time.Duration(o.arg) * time.Millisecond)
				}
				if msg = m.Check(); msg != "" {
					msg = fmt.Sprintf("after step %d (%v): %s", i, o, msg)
					return
				}
			}
		})
		if msg != "" {
			rt.Fatal(msg)
		}
	})
}

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
	calls    []*call
	holders  []int // model: calls holding a slot
	queue    []int // model: calls waiting, oldest first
	expires  []time.Duration
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
	m := &machine{b: b, limit: cfg.MaxConcurrent, ceiling: cfg.MaxConcurrent, maxQueue: cfg.MaxQueue, maxWait: cfg.MaxWait, start: time.Now()}
	if m.maxWait == 0 {
		m.maxWait = bulkhead.DefaultMaxWait
	}
	return m
}

// Arrive starts a call.
func (m *machine) Arrive() {
	ctx, cancel := context.WithCancel(context.Background())
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
	switch {
	case len(m.holders) < m.limit && len(m.queue) == 0:
		m.holders = append(m.holders, id)
	case len(m.queue) < m.maxQueue:
		m.queue = append(m.queue, id)
		m.expires = append(m.expires, m.now+m.maxWait)
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
	if holding <= m.limit && len(m.queue) > 0 {
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
	m.calls[m.queue[i]].cancel()
	m.queue = slices.Delete(m.queue, i, i+1)
	m.expires = slices.Delete(m.expires, i, i+1)
	synctest.Wait()
}

// Resize moves the limit to n.
func (m *machine) Resize(n int) {
	m.limit = n
	m.ceiling = max(n, len(m.holders))
	m.b.SetLimit(m.limit)
	for len(m.holders) < m.limit && len(m.queue) > 0 {
		m.admitFirst()
	}
	synctest.Wait()
}

// Advance lets d pass: waits that run out are refused.
func (m *machine) Advance(d time.Duration) {
	time.Sleep(d)
	m.now += d
	for i := 0; i < len(m.queue); {
		if m.expires[i] <= m.now {
			m.queue = slices.Delete(m.queue, i, i+1)
			m.expires = slices.Delete(m.expires, i, i+1)
			continue
		}
		i++
	}
	synctest.Wait()
}

func (m *machine) admitFirst() {
	m.holders = append(m.holders, m.queue[0])
	m.queue, m.expires = m.queue[1:], m.expires[1:]
}

// Check holds the bulkhead to the model: the same calls hold slots (so the
// queue is first come, first served), the same number wait, and no more calls
// are inside than the limit allows, unless the limit was lowered under them.
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
	for _, id := range m.queue {
		if m.calls[id].done {
			return fmt.Sprintf("call %d should wait; Acquire returned %v", id, m.calls[id].err)
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

// TestBulkheadMatchesModel runs random scripts of arrivals, departures,
// cancellations, limit changes and time passing against a real bulkhead,
// each script in a synctest bubble of its own, and holds it to the model
// after every step.
func TestBulkheadMatchesModel(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		cfg := bulkhead.Config{
			MaxConcurrent: rapid.IntRange(1, 4).Draw(rt, "slots"),
			MaxQueue:      rapid.IntRange(0, 4).Draw(rt, "queue"),
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
					m.Arrive()
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

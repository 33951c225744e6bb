package bulkhead_test

import (
	"context"
	"fmt"
	"math"
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
	level  criticality.Level
	tenant string
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
	// percent is Config.TenantShare in hundredths, or 0 when it bounds no
	// tenant (0 or 1), so that the model's bounds are whole arithmetic.
	percent int
	// kept is Config.Guarantees in hundredths of the limit, by level, and
	// asked when a call of each level last found no slot while its level
	// was owed its guarantee (see owed).
	kept    [criticality.Levels]int
	asked   [criticality.Levels]time.Duration
	gate    giveway.Gate // the model's own: the levels that give way
	calls   []*call
	holders []int     // model: calls holding a slot
	queue   []waiting // model: calls waiting, oldest first
	// ceiling is the most calls that may be inside: the limit, or more for a
	// while after the limit was lowered under the calls already inside.
	ceiling int
	now     time.Duration
	start   time.Time
	// regrowAt is when the bulkhead serves its queue again because the
	// rules loosen with time alone, or 0 when it will not (see recheck).
	regrowAt time.Duration
}

// newMachine builds the bulkhead of cfg and its model; percent is
// cfg.TenantShare in hundredths.
func newMachine(cfg bulkhead.Config, percent int) *machine {
	b, err := bulkhead.New(cfg)
	if err != nil {
		panic(err)
	}
	m := &machine{b: b, limit: cfg.MaxConcurrent, ceiling: cfg.MaxConcurrent, maxQueue: cfg.MaxQueue, maxWait: cfg.MaxWait, shares: cfg.Shares, gate: giveway.New(cfg.Shares), start: time.Now()}
	if m.maxWait == 0 {
		m.maxWait = bulkhead.DefaultMaxWait
	}
	if percent < 100 {
		m.percent = percent
	}
	m.kept[criticality.Default-1] = int(math.Round(cfg.Guarantees.Default * 100))
	m.kept[criticality.Sheddable-1] = int(math.Round(cfg.Guarantees.Sheddable * 100))
	for i := range m.asked {
		m.asked[i] = -giveway.Recovery
	}
	return m
}

// guarantee is the slots kept for level l at the current limit.
func (m *machine) guarantee(l criticality.Level) int { return m.kept[l-1] * m.limit / 100 }

// held is how many slots calls of level l hold.
func (m *machine) held(l criticality.Level) int {
	n := 0
	for _, id := range m.holders {
		if m.calls[id].level == l {
			n++
		}
	}
	return n
}

// owed reports whether level l holds fewer slots than its guarantee.
func (m *machine) owed(l criticality.Level) bool { return m.held(l) < m.guarantee(l) }

// lent reports whether a call of level l, not owed, may take a slot when
// used are taken: the slots other levels are owed stay free for a
// Recovery after each time one of their calls found none.
func (m *machine) lent(l criticality.Level, used int) bool {
	for k := criticality.Sheddable; k <= criticality.Critical; k++ {
		if k != l && m.now-m.asked[k-1] < giveway.Recovery {
			used += max(0, m.guarantee(k)-m.held(k))
		}
	}
	return used < m.limit
}

// short records that a call of level l for tenant t found no slot.
func (m *machine) short(l criticality.Level, t string) {
	if m.owed(l) && m.under(t, l) {
		m.asked[l-1] = m.now
	}
}

// admits reports whether a call of level l for tenant t may take a slot
// when used are taken, ahead being whether a call of l or above waits
// that may take one: while its level is owed its guarantee, whenever a
// slot is free and its tenant may hold one more; otherwise when its level
// fits, its tenant is under its bound, nobody waits ahead and no other
// level's guarantee is asked for.
func (m *machine) admits(l criticality.Level, t string, used int, ahead bool) bool {
	if m.owed(l) {
		return used < m.limit && m.under(t, l)
	}
	return m.fits(l, used) && m.under(t, l) && !ahead && m.lent(l, used)
}

// waiting is a call of the model's queue.
type waiting struct {
	id      int
	level   criticality.Level
	tenant  string
	expires time.Duration
}

// first is the index in m.queue of the call a slot goes to when used are
// taken: of the calls whose level may fill one more slot and whose tenant
// may hold one more, the oldest of the highest level; -1 if none may.
func (m *machine) first(used int) int {
	at := -1
	for i, w := range m.queue { // a call of a level owed its guarantee first
		if used < m.limit && m.owed(w.level) && m.under(w.tenant, w.level) && (at < 0 || w.level > m.queue[at].level) {
			at = i
		}
	}
	if at >= 0 {
		return at
	}
	for i, w := range m.queue {
		if !m.fits(w.level, used) || !m.under(w.tenant, w.level) || !m.lent(w.level, used) {
			continue
		}
		if at < 0 || w.level > m.queue[at].level {
			at = i
		}
	}
	return at
}

// room is how many slots calls of level l may fill now: the fewest taken
// at which the gate refuses l.
func (m *machine) room(l criticality.Level) int {
	n := 0
	for n < m.limit && m.fits(l, n) {
		n++
	}
	return n
}

// under reports whether tenant t may take one more slot for a call of
// level l now: always for no tenant or no TenantShare, otherwise while it
// holds fewer than its part of the level's room, rounded down, at least 1.
func (m *machine) under(t string, l criticality.Level) bool {
	if t == "" || m.percent == 0 {
		return true
	}
	held := 0
	for _, id := range m.holders {
		if m.calls[id].tenant == t {
			held++
		}
	}
	return held < max(1, m.percent*m.room(l)/100)
}

// refuse records the refusal of a call of level l for tenant t: the
// levels below give way, unless t holds its bound.
func (m *machine) refuse(l criticality.Level, t string) {
	if m.under(t, l) {
		m.gate.Refused(l, m.now)
	}
	m.short(l, t)
	m.recheck()
}

// heldBack reports whether a guarantee's hold-back runs now.
func (m *machine) heldBack() bool {
	for _, asked := range m.asked {
		if asked+giveway.Recovery > m.now {
			return true
		}
	}
	return false
}

// recheck: while calls wait and a level gives way or a hold-back runs, the
// queue is served again at the next tenth of a Recovery since the start.
func (m *machine) recheck() {
	if m.regrowAt != 0 || len(m.queue) == 0 || !m.heldBack() && m.gate.Settles(m.now) == 0 {
		return
	}
	step := giveway.Recovery / 10
	m.regrowAt = (m.now/step + 1) * step
}

// serve gives the free slots to the queued calls that may have them.
func (m *machine) serve() {
	for f := m.first(len(m.holders)); f >= 0; f = m.first(len(m.holders)) {
		m.admit(f)
	}
	m.recheck()
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

// Arrive starts a call of level l for tenant t ("" for none). Each arrives
// a nanosecond after the step before, so that no two waits run out at the
// same instant: the bulkhead serves those in any order, and whether one
// makes the lower levels give way may depend on the other.
func (m *machine) Arrive(l criticality.Level, t string) {
	m.Advance(time.Nanosecond)
	ctx, cancel := context.WithCancel(criticality.WithTenant(criticality.With(context.Background(), l), t))
	c := &call{level: l, tenant: t, cancel: cancel, result: make(chan error, 1), leave: make(chan struct{}), left: make(chan struct{})}
	id := len(m.calls)
	m.calls = append(m.calls, c)
	go func() {
		err := m.b.Acquire(ctx)
		c.result <- err
		if err == nil {
			<-c.leave
			m.b.Release(ctx)
		}
		close(c.left)
	}()
	// A call held back by its own tenant's bound holds up nobody else.
	ahead := slices.ContainsFunc(m.queue, func(w waiting) bool { return w.level >= l && m.under(w.tenant, w.level) })
	switch {
	case m.admits(l, t, len(m.holders), ahead):
		m.holders = append(m.holders, id)
	case len(m.queue) < m.maxQueue:
		m.queue = append(m.queue, waiting{id, l, t, m.now + m.maxWait})
		m.short(l, t)
	case m.last() >= 0 && m.queue[m.last()].level < l: // it takes the place of the last
		m.refuse(m.queue[m.last()].level, m.queue[m.last()].tenant)
		m.queue = slices.Delete(m.queue, m.last(), m.last()+1)
		m.queue = append(m.queue, waiting{id, l, t, m.now + m.maxWait})
		m.short(l, t)
	default:
		m.refuse(l, t)
	}
	m.recheck()
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
	for f := m.first(holding - 1); f >= 0; f = m.first(len(m.holders)) { // the freed slot, and any the release made usable
		m.admit(f)
	}
	m.recheck()
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
	m.serve()
	synctest.Wait()
}

// Advance lets d pass: at each of its instants the queue is served again
// (see recheck), and a wait that runs out serves the queue and is then
// refused, unless its call got a slot.
func (m *machine) Advance(d time.Duration) {
	time.Sleep(d)
	end := m.now + d
	for {
		next, expiring := time.Duration(-1), -1
		for i, w := range m.queue {
			if w.expires <= end && (expiring < 0 || w.expires < next) {
				next, expiring = w.expires, i
			}
		}
		if m.regrowAt != 0 && m.regrowAt <= end && (expiring < 0 || m.regrowAt < next) {
			m.now, m.regrowAt = m.regrowAt, 0
			m.serve()
			continue
		}
		if expiring < 0 {
			break
		}
		m.now = next
		id := m.queue[expiring].id
		m.serve()
		if i := slices.IndexFunc(m.queue, func(w waiting) bool { return w.id == id }); i >= 0 {
			w := m.queue[i]
			m.queue = slices.Delete(m.queue, i, i+1)
			m.refuse(w.level, w.tenant)
		}
	}
	m.now = end
	synctest.Wait()
}

// admit gives queued call number f a slot.
func (m *machine) admit(f int) {
	m.holders = append(m.holders, m.queue[f].id)
	m.queue = slices.Delete(m.queue, f, f+1)
}

// Check holds the bulkhead to the model: the same calls hold slots (so the
// queue serves higher levels first and, within a level, first come first
// served, passing over the calls whose tenant holds its bound; and no
// tenant holds more than its bound), the same number wait, and no more
// calls are inside than the limit allows, unless the limit was lowered
// under them.
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
	// The promise of a guarantee: a call of a level owed one never waits
	// while a slot is free. (With tenants counted, a waiting call's bound
	// grows back with the levels' shares as time passes, and the queue
	// looks again only when a slot is given back, so the promise is held
	// there by the model alone.)
	for _, w := range m.queue {
		if m.percent == 0 && m.owed(w.level) && len(m.holders) < m.limit {
			return fmt.Sprintf("call %d of %v waits with a slot free, though its level holds %d of its guarantee %d", w.id, w.level, m.held(w.level), m.guarantee(w.level))
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
// level, for three tenants and none), departures, cancellations, limit
// changes and time passing against a real bulkhead with random shares and
// a random TenantShare (none, 1, or a whole percentage), each script in a
// synctest bubble of its own, and holds it to the model after every step.
func TestBulkheadMatchesModel(t *testing.T) {
	tenants := []string{"", "a", "b", "c"}
	rapid.Check(t, func(rt *rapid.T) {
		cfg := bulkhead.Config{
			MaxConcurrent: rapid.IntRange(1, 5).Draw(rt, "slots"),
			MaxQueue:      rapid.IntRange(0, 4).Draw(rt, "queue"),
		}
		// Most scripts bound tenants; the others check that 0 and 1 bound none.
		percent := rapid.SampledFrom([]int{-1, -1, 0, 100}).Draw(rt, "tenant share")
		if percent < 0 {
			percent = rapid.IntRange(1, 99).Draw(rt, "percent")
		}
		cfg.TenantShare = float64(percent) / 100
		if rapid.Bool().Draw(rt, "shares") {
			d := rapid.Float64Range(0.1, 1).Draw(rt, "default")
			cfg.Shares = criticality.Shares{Default: d, Sheddable: rapid.Float64Range(0.1, d).Draw(rt, "sheddable")}
		}
		if rapid.Bool().Draw(rt, "guarantees") {
			d := rapid.IntRange(0, min(60, int(cfg.Shares.Of(criticality.Default)*100))).Draw(rt, "kept default")
			sh := rapid.IntRange(0, min(99-d, int(cfg.Shares.Of(criticality.Sheddable)*100))).Draw(rt, "kept sheddable")
			cfg.Guarantees = criticality.Guarantees{Default: float64(d) / 100, Sheddable: float64(sh) / 100}
		}
		if cfg.MaxQueue > 0 {
			cfg.MaxWait = time.Duration(rapid.IntRange(1, 5).Draw(rt, "wait")) * time.Second
		}
		script := rapid.SliceOfN(rapid.Custom(func(rt *rapid.T) op {
			kind := rapid.SampledFrom([]string{"arrive", "arrive", "arrive", "leave", "leave", "cancel", "resize", "advance"}).Draw(rt, "kind")
			switch kind {
			case "resize":
				return op{kind, rapid.IntRange(1, 6).Draw(rt, "limit")}
			case "advance":
				return op{kind, rapid.IntRange(1, 3000).Draw(rt, "ms")}
			case "arrive": // the level and the tenant, as level×4 + tenant
				return op{kind, rapid.IntRange(int(criticality.Sheddable), int(criticality.Critical)).Draw(rt, "level")*4 +
					rapid.IntRange(0, len(tenants)-1).Draw(rt, "tenant")}
			}
			return op{kind, rapid.IntRange(0, 7).Draw(rt, "pick")}
		}), 20, 120).Draw(rt, "script")
		var msg string
		synctest.Test(t, func(*testing.T) {
			m := newMachine(cfg, percent)
			defer m.finish()
			for i, o := range script {
				switch o.kind {
				case "arrive":
					m.Arrive(criticality.Level(o.arg/4), tenants[o.arg%4])
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

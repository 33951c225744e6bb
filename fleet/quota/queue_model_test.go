package quota

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// queueMachine drives a real quota's queue (see queue) with random
// arrivals, cancellations, fetches and calls to Allow, some of them at the
// same time, and a model of it: the calls waiting, oldest first, and the
// tokens in the lease. The model serves first come, first served, and a
// call handed a token as its context ends passes it on; the quota must
// admit exactly the calls the model admits, which is to say never more than
// the tokens it got and, among the calls that waited, in the order they
// arrived.
type queueMachine struct {
	h         *spentQuota
	calls     []*call
	waiting   []int // model: the calls in the queue, oldest first
	admitted  []int // model: the calls that waited and got a token, in order
	gone      []int // model: the calls whose context ended
	lease     int64 // model: the tokens in the lease
	deposited int64 // every token given to the process
	allowed   int64 // the calls Allow admitted
}

// serve hands the model's lease to the calls waiting, oldest first.
func (m *queueMachine) serve() {
	for m.lease > 0 && len(m.waiting) > 0 {
		m.admitted = append(m.admitted, m.waiting[0])
		m.waiting = m.waiting[1:]
		m.lease--
	}
}

// settle waits until every call the model says has returned has, so that
// the checks compare the quota at rest with the model.
func (m *queueMachine) settle(t *rapid.T) {
	for _, id := range m.admitted {
		c := m.calls[id]
		if err := c.result(t); err != nil {
			t.Fatalf("call %d should have been admitted: %v", id, err)
		}
		c.done <- nil // keep its result for the checks
	}
	for _, id := range m.gone {
		c := m.calls[id]
		err := c.result(t)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("call %d was canceled, and returned %v", id, err)
		}
		c.done <- err
	}
}

func (m *queueMachine) arrive(t *rapid.T) {
	id := len(m.calls)
	if m.lease > 0 { // none waits: Allow takes a token from the lease
		m.calls = append(m.calls, m.h.start(context.Background()))
		m.admitted = append(m.admitted, id)
		m.lease--
		return
	}
	m.calls = append(m.calls, m.h.arrive(t, context.Background()))
	m.waiting = append(m.waiting, id)
}

// pick returns a waiting call, chosen by t, and takes it out of the model's
// queue as gone.
func (m *queueMachine) pick(t *rapid.T) int {
	i := rapid.IntRange(0, len(m.waiting)-1).Draw(t, "which")
	id := m.waiting[i]
	m.waiting = slices.Delete(m.waiting, i, i+1)
	m.gone = append(m.gone, id)
	return id
}

func (m *queueMachine) actions() map[string]func(*rapid.T) {
	return map[string]func(*rapid.T){
		"arrive": m.arrive,
		"allow": func(t *rapid.T) {
			_, ok := m.h.q.Allow()
			if want := m.lease > 0; ok != want {
				t.Fatalf("Allow = %v with %d tokens in the lease and %d calls waiting", ok, m.lease, len(m.waiting))
			}
			if ok {
				m.lease--
				m.allowed++
			}
		},
		"fetch": func(t *rapid.T) {
			n := rapid.Int64Range(0, 3).Draw(t, "tokens")
			m.h.q.deposit(n)
			m.deposited += n
			m.lease += n
			m.serve()
		},
		"cancel": func(t *rapid.T) {
			if len(m.waiting) == 0 {
				t.Skip("no call waits")
			}
			m.calls[m.pick(t)].cancel()
			m.settle(t)
		},
		// A call's context ends as a fetch brings tokens: whichever comes
		// first, the call is not admitted, and the token is the next call's.
		"cancel as a fetch comes": func(t *rapid.T) {
			if len(m.waiting) == 0 {
				t.Skip("no call waits")
			}
			n := rapid.Int64Range(1, 3).Draw(t, "tokens")
			m.calls[m.pick(t)].cancel()
			m.h.q.deposit(n)
			m.deposited += n
			m.lease += n
			m.serve()
		},
		// A call arrives as a fetch has added tokens to the lease and not yet
		// handed them out: it goes behind the calls waiting.
		"arrive as a fetch comes": func(t *rapid.T) {
			n := rapid.Int64Range(1, 3).Draw(t, "tokens")
			m.h.q.tokens.Add(n)
			m.deposited += n
			m.lease += n
			id := len(m.calls)
			m.calls = append(m.calls, m.h.start(context.Background()))
			m.waiting = append(m.waiting, id)
			m.serve()
		},
		"": m.check,
	}
}

// check holds the quota to the model once every call that should have
// returned has, and the quota has handed out what it will (a call started
// as a fetch came may join the queue a moment later, and a call canceled as
// a token reached it passes the token on when it wakes).
func (m *queueMachine) check(t *rapid.T) {
	m.settle(t)
	q := m.h.q
	require.Eventually(t, func() bool {
		return q.queued.Load() == int64(len(m.waiting)) && q.tokens.Load() == m.lease
	}, wait, 50*time.Microsecond, "the quota's queue and lease as the model's")
	for _, id := range m.waiting {
		if m.calls[id].returned() {
			t.Fatalf("call %d returned while calls that arrived before it wait: %v", id, <-m.calls[id].done)
		}
	}
	if admitted := int64(len(m.admitted)) + m.allowed; admitted+m.lease != m.deposited {
		t.Fatalf("%d admitted and %d in the lease, of %d tokens", admitted, m.lease, m.deposited)
	}
}

// finish ends every call still waiting and empties the lease, so that the
// next case finds the quota as newQueue left it.
func (m *queueMachine) finish(t *rapid.T) {
	for len(m.waiting) > 0 {
		m.calls[m.waiting[0]].cancel()
		m.gone = append(m.gone, m.waiting[0])
		m.waiting = m.waiting[1:]
	}
	m.settle(t)
	m.h.q.tokens.Store(0)
	if n := m.h.q.queued.Load(); n != 0 {
		panic(fmt.Sprintf("%d calls still queued", n))
	}
}

// Under random arrivals, cancellations, fetches and calls to Allow, some at
// the same time, the quota admits exactly the calls a first come, first
// served queue admits: never more than the tokens it got, and the calls that
// waited in the order they arrived.
func TestQuotaQueueIsFirstComeFirstServed(t *testing.T) {
	h := newQueue(t) // one quota for every case: each case leaves it as it found it
	rapid.Check(t, func(t *rapid.T) {
		m := &queueMachine{h: h}
		t.Cleanup(func() { m.finish(t) })
		t.Repeat(m.actions())
	})
}

package quota

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/criticality"
)

// spentQuota is a spent quota whose tokens come only when a test deposits them.
// Its Redis earns one token in 1,000 s and holds one, so it earns none
// during a test; the one token it held is spent, and the fetch that spending
// asked for found Redis empty, so the quota's goroutine pauses for 1,000 s
// on a fake clock that only the test moves. A test hands tokens to the
// process with deposit, the last step of every fetch, as a fetch would. Its
// stage waits up to an hour.
type spentQuota struct {
	*client
	clock *clockwork.FakeClock
	pl    *pipeline.Pipeline[string]
}

func newQueue(t *testing.T) *spentQuota {
	t.Helper()
	h := &spentQuota{clock: clockwork.NewFakeClock()}
	h.client = newClient(t, redisAddr(t), Config{Namespace: namespace(t), Rate: 0.001, Burst: 1, Lease: 1,
		Processes: 1, MaxWait: time.Hour, Clock: h.clock})
	h.pl = pipeline.New(Guard[string](h.q))
	_, ok := h.q.Allow()
	require.True(t, ok, "the one token Redis held")
	require.Eventually(t, func() bool { return h.q.fetches.Load() == 2 }, wait, tick)
	require.NoError(t, h.clock.BlockUntilContext(t.Context(), 1), "the loop pauses")
	return h
}

// call is one call through a queue's stage, on a goroutine of its own.
type call struct {
	cancel context.CancelFunc
	done   chan error
}

// start starts a call with a context of its own, derived from parent.
func (h *spentQuota) start(parent context.Context) *call {
	ctx, cancel := context.WithCancel(parent)
	c := &call{cancel: cancel, done: make(chan error, 1)}
	go func() {
		_, err := h.pl.Execute(ctx, ran)
		c.done <- err
	}()
	return c
}

// arrive starts a call and returns once it waits in the queue, so that the
// calls a test starts one after the other arrive in that order.
func (h *spentQuota) arrive(t require.TestingT, parent context.Context) *call {
	n := h.q.queued.Load()
	c := h.start(parent)
	require.Eventually(t, func() bool { return h.q.queued.Load() == n+1 }, wait, 50*time.Microsecond, "the call waits")
	return c
}

// result waits for the call's end and returns what Execute returned.
func (c *call) result(t require.TestingT) error {
	select {
	case err := <-c.done:
		return err
	case <-time.After(wait):
		require.Fail(t, "the call did not return")
		return nil
	}
}

// returned reports whether the call has returned, without waiting.
func (c *call) returned() bool { return len(c.done) > 0 }

// Calls that wait are served in the order they arrived: each token a fetch
// brings goes to the oldest call waiting, and only that call returns.
func TestQuotaWaitingCallsAreServedInArrivalOrder(t *testing.T) {
	h := newQueue(t)
	calls := make([]*call, 5)
	for i := range calls {
		calls[i] = h.arrive(t, context.Background())
	}
	for i, c := range calls {
		h.q.deposit(1)
		assert.Equal(t, int64(len(calls)-i-1), h.q.queued.Load(), "one token, one call out of the queue")
		require.NoError(t, c.result(t), "call %d, the oldest still waiting", i)
		for j, later := range calls[i+1:] {
			assert.False(t, later.returned(), "call %d, which arrived after %d", i+1+j, i)
		}
	}
	assert.Zero(t, h.q.tokens.Load(), "every token went to a call")
}

// Calls of a higher criticality level are served first: a Critical call
// that arrives after Sheddable and Default ones gets the first token, then
// the Default one, then the Sheddable one; within a level, the oldest.
func TestQuotaServesHigherLevelsFirst(t *testing.T) {
	h := newQueue(t)
	at := func(l criticality.Level) context.Context { return criticality.With(context.Background(), l) }
	shed := h.arrive(t, at(criticality.Sheddable))
	def := h.arrive(t, context.Background())
	crit := h.arrive(t, at(criticality.Critical))
	for _, c := range []*call{crit, def, shed} {
		h.q.deposit(1)
		require.NoError(t, c.result(t))
	}
	assert.Zero(t, h.q.queued.Load())
}

// A fetch that brings two tokens while three calls wait serves the two
// oldest; the third waits for the next fetch. Here the tokens come from
// Redis, through the quota's own fetches.
func TestQuotaAFetchServesTheOldestCallsFirst(t *testing.T) {
	w := newWaiting(t, redisAddr(t), time.Hour) // a lease of 2, Redis empty, the loop paused for 200 s
	w.spend(t)
	h := &spentQuota{client: w.client, clock: w.clock, pl: w.pl}
	calls := make([]*call, 3)
	for i := range calls {
		calls[i] = h.arrive(t, context.Background())
	}
	require.NoError(t, w.clock.BlockUntilContext(t.Context(), 4), "the loop's pause and the calls' MaxWait")
	// Redis fills up (as if 200 s had passed on its clock), and the loop's
	// pause ends: its fetch brings 2 tokens.
	require.NoError(t, w.rdb.Del(context.Background(), w.q.keys.tat).Err())
	w.clock.Advance(200 * time.Second)
	require.NoError(t, calls[0].result(t))
	require.NoError(t, calls[1].result(t))
	require.Eventually(t, func() bool { return w.q.queued.Load() == 1 }, wait, tick)
	assert.False(t, calls[2].returned(), "the youngest call waits for the next fetch")

	require.NoError(t, w.clock.BlockUntilContext(t.Context(), 2), "the loop pauses again")
	require.NoError(t, w.rdb.Del(context.Background(), w.q.keys.tat).Err())
	w.clock.Advance(200 * time.Second)
	require.NoError(t, calls[2].result(t))
}

// A call that arrives while others wait goes behind them, even if the lease
// holds tokens at that instant (a fetch has added them and not yet handed
// them out): Allow refuses, and a call through the stage queues, hands the
// tokens to the calls ahead of it, and waits for the next.
func TestQuotaALateCallDoesNotOvertake(t *testing.T) {
	h := newQueue(t)
	first := h.arrive(t, context.Background())
	second := h.arrive(t, context.Background())
	h.q.tokens.Add(2) // a fetch's tokens, not yet handed out

	wait, ok := h.q.Allow()
	assert.False(t, ok, "the tokens are the waiting calls'")
	assert.Positive(t, wait)
	late := h.start(context.Background())
	require.NoError(t, first.result(t))
	require.NoError(t, second.result(t))
	require.Eventually(t, func() bool { return h.q.queued.Load() == 1 }, wait, tick, "the late call waits")
	assert.False(t, late.returned())
	assert.Zero(t, h.q.tokens.Load())

	h.q.deposit(1)
	require.NoError(t, late.result(t))
}

// A waiting call whose context ends leaves the queue, and the calls behind
// it move up: the next tokens go to them. A call handed a token just as its
// context ended passes the token on to the next call.
func TestQuotaACanceledCallHandsItsPlaceOn(t *testing.T) {
	h := newQueue(t)
	a := h.arrive(t, context.Background())
	b := h.arrive(t, context.Background())
	c := h.arrive(t, context.Background())
	b.cancel()
	assert.ErrorIs(t, b.result(t), context.Canceled)
	assert.Equal(t, int64(2), h.q.queued.Load())
	h.q.deposit(2)
	require.NoError(t, a.result(t))
	require.NoError(t, c.result(t))

	d := h.arrive(t, context.Background())
	e := h.arrive(t, context.Background())
	h.q.mu.Lock() // d cannot look at the queue until the token is its own
	d.cancel()
	h.q.tokens.Add(1)
	h.q.serve(false)
	h.q.mu.Unlock()
	assert.ErrorIs(t, d.result(t), context.Canceled, "d's caller is gone")
	require.NoError(t, e.result(t), "d's token went to e")
	assert.Zero(t, h.q.tokens.Load())
	assert.Zero(t, h.q.queued.Load())
}

// A waiting call whose wait runs out leaves the queue with nothing, and the
// next token goes to the call behind it. A call handed a token just as its
// wait ran out keeps it.
func TestQuotaACallWhoseWaitRunsOutLeavesTheQueue(t *testing.T) {
	h := newQueue(t)
	// A deadline in 30 minutes makes the first call's wait 30 minutes of the
	// fake clock; the second waits MaxWait, an hour.
	soon, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	a := h.arrive(t, soon)
	b := h.arrive(t, context.Background())
	require.NoError(t, h.clock.BlockUntilContext(t.Context(), 3), "the loop's pause and the calls' waits")
	h.clock.Advance(30 * time.Minute)
	assert.ErrorIs(t, a.result(t), pipeline.RateLimited)
	require.Eventually(t, func() bool { return h.q.queued.Load() == 1 }, wait, tick)
	h.q.deposit(1)
	require.NoError(t, b.result(t), "the token went to the call still waiting")

	c := h.arrive(t, context.Background())
	require.NoError(t, h.clock.BlockUntilContext(t.Context(), 2), "the loop's pause and the call's wait")
	h.q.mu.Lock() // c cannot look at the queue until its wait has run out and the token is its own
	h.clock.Advance(time.Hour)
	h.q.tokens.Add(1)
	h.q.serve(false)
	h.q.mu.Unlock()
	require.NoError(t, c.result(t), "a token handed over as the wait ran out is the call's")
	assert.Zero(t, h.q.tokens.Load())
}

// While calls wait, their wake-up channels are made by the quota's
// goroutine; once their calls are done the quota keeps them for the next
// calls, so that a call that waits, after the first few, allocates no
// channel: a call with no spare waits on the broadcast until the goroutine
// gives it one.
func TestQuotaKeepsTheWaitersChannels(t *testing.T) {
	h := newQueue(t)
	a := h.arrive(t, context.Background())
	require.Eventually(t, func() bool {
		h.q.mu.Lock()
		defer h.q.mu.Unlock()
		return front(h.q).wake != nil
	}, wait, tick, "the quota's goroutine gives the call a channel")
	h.q.deposit(1)
	require.NoError(t, a.result(t))
	h.q.mu.Lock()
	assert.Equal(t, 1, h.q.spares)
	h.q.mu.Unlock()

	b := h.arrive(t, context.Background())
	h.q.mu.Lock()
	assert.Zero(t, h.q.spares, "the next call took it")
	assert.NotNil(t, front(h.q).wake)
	assert.Zero(t, h.q.bare)
	h.q.mu.Unlock()
	h.q.deposit(1)
	require.NoError(t, b.result(t))
}

// A waiting call is refused when the quota closes, and the calls behind it
// too; none takes a token.
func TestQuotaCloseRefusesTheQueue(t *testing.T) {
	h := newQueue(t)
	a := h.arrive(t, context.Background())
	b := h.arrive(t, context.Background())
	h.q.Close()
	for _, c := range []*call{a, b} {
		err := c.result(t)
		stop, ok := errors.AsType[*pipeline.StopError](err)
		require.True(t, ok, "%v", err)
		assert.Equal(t, pipeline.RateLimited, stop.Reason)
	}
	assert.Zero(t, h.q.queued.Load())
}

// Allow allocates nothing, whether it admits, refuses with calls waiting
// (their tokens are theirs), or decides on the local share, admitting or
// refusing.
func TestQuotaAllowAllocatesNothing(t *testing.T) {
	h := newQueue(t)
	h.q.tokens.Add(1 << 20)
	assert.Zero(t, testing.AllocsPerRun(100, func() { h.q.Allow() }), "admitting")
	h.q.tokens.Store(0)
	a := h.arrive(t, context.Background())
	assert.Zero(t, testing.AllocsPerRun(100, func() { h.q.Allow() }), "refusing while a call waits")
	a.cancel()
	assert.ErrorIs(t, a.result(t), context.Canceled)

	down := newClient(t, "127.0.0.1:1", Config{Namespace: namespace(t), Rate: 1000, Burst: 50, Processes: 1})
	require.True(t, down.q.Degraded())
	assert.Zero(t, testing.AllocsPerRun(100, func() { down.q.Allow() }), "on the local share")
}

// front is the first call waiting in q.
func front(q *Quota) *waiter {
	w, _, _ := q.waiting.Front()
	return w
}

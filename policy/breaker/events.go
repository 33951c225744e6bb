package breaker

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/resilience-go/pipeline"
)

// Cause says why a breaker changed state.
type Cause uint8

const (
	// CauseConsecutiveFailures: Config.ConsecutiveFailures failures in a row.
	CauseConsecutiveFailures Cause = iota + 1
	// CauseFailureRatio: the trip window reached Config.FailureRatio.
	CauseFailureRatio
	// CauseSlowCalls: the slow samples of the trip window reached
	// Config.SlowCallRatio.
	CauseSlowCalls
	// CauseProbeFailed: a probe failed (or panicked).
	CauseProbeFailed
	// CauseProbeSlow: the half-open phase's probes succeeded, but those that
	// took longer than Config.ProbeSlowFraction of the effective slow-call
	// threshold (Config.SlowCallThreshold or the measured one) led the fast
	// ones by Config.ProbeSlowLead.
	// It re-opens a half-open breaker, or, with Config.Recovery set, starts the
	// recovery ramp held at Recovery.Initial.
	CauseProbeSlow
	// CauseBreakElapsed: an attempt arrived after the break and became a probe.
	CauseBreakElapsed
	// CauseProbesSucceeded: the half-open phase's fast probes led its slow ones
	// by Config.ProbeSuccesses, which closes a half-open breaker or, with
	// Config.Recovery set, starts its recovery ramp.
	CauseProbesSucceeded
	// CauseIsolate: Breaker.Isolate was called.
	CauseIsolate
	// CauseReset: Breaker.Reset was called.
	CauseReset
	// CauseRelativeFailureRatio: the trip window, with at least two failures,
	// reached the relative trip point measured by Config.Failures.
	CauseRelativeFailureRatio
	// CauseRampFailed: Config.ConsecutiveFailures attempts in a row admitted
	// by the recovery ramp failed, which re-opens a Recovering breaker.
	CauseRampFailed
	// CauseRampDone: the recovery ramp's admitted fraction reached 1, and the
	// first admission or outcome after that closed the breaker.
	CauseRampDone
	// CauseForced: Breaker.IsolateFor opened the breaker for a given time.
	CauseForced
	// CauseTrickle: a probe the trickle let through during the break succeeded
	// fast (see [Recovery]), which ends the break early.
	CauseTrickle
)

// String returns the cause in words.
func (c Cause) String() string {
	switch c {
	case CauseConsecutiveFailures:
		return "consecutive failures"
	case CauseFailureRatio:
		return "failure ratio"
	case CauseSlowCalls:
		return "slow calls"
	case CauseProbeFailed:
		return "probe failed"
	case CauseProbeSlow:
		return "probe slow"
	case CauseBreakElapsed:
		return "break elapsed"
	case CauseProbesSucceeded:
		return "probes succeeded"
	case CauseIsolate:
		return "isolated"
	case CauseReset:
		return "reset"
	case CauseRelativeFailureRatio:
		return "relative failure ratio"
	case CauseRampFailed:
		return "ramp failed"
	case CauseRampDone:
		return "ramp done"
	case CauseForced:
		return "forced open"
	case CauseTrickle:
		return "trickle succeeded"
	}
	return fmt.Sprintf("breaker.Cause(%d)", uint8(c))
}

// Transition reports a change of the breaker's stored state, at the moment it
// happened on the breaker's clock. Break is the break actually served (after
// jitter) when To is Open, and 0 otherwise. [Breaker.IsolateFor] raises one
// even when the breaker was already Open (From and To both Open), since it
// replaces the break.
type Transition struct {
	From, To State
	Cause    Cause
	Break    time.Duration
	At       time.Time
	// Shadow is true when the breaker was in shadow mode (see Config.Shadow):
	// the transition happened, but only to the hypothetical breaker, and
	// changed nothing for the attempts.
	Shadow bool
}

// Name returns "breaker.transition".
func (Transition) Name() string { return "breaker.transition" }

// Rejection reports one refused attempt: the state that refused it and the
// retry-after hint it carried.
type Rejection struct {
	State      State
	RetryAfter time.Duration
	At         time.Time
	// Shadow is true when the breaker was in shadow mode (see Config.Shadow):
	// the attempt was admitted after all, and the refusal is what the breaker
	// would have done.
	Shadow bool
}

// Name returns "breaker.rejection".
func (Rejection) Name() string { return "breaker.rejection" }

// outbox is the events of a breaker waiting for delivery, oldest first, and
// their delivery, which runs on no lock of the breaker's (see flush).
type outbox struct {
	queue []pipeline.Event // guarded by the breaker's mu
	// delivering is held by the one goroutine delivering events; it is never
	// acquired while mu is held, and guards spare.
	delivering sync.Mutex
	spare      []pipeline.Event
}

// emit queues e for delivery. Call it with mu held; it does nothing without a
// hook, so an unobserved breaker builds no events.
func (b *Breaker) emit(e pipeline.Event) {
	if b.onEvent != nil {
		b.outbox.queue = append(b.outbox.queue, e)
		b.pending.Store(true)
	}
}

// transition queues t for delivery, marked with the breaker's mode. Call it
// with mu held, once the change t reports is made.
func (b *Breaker) transition(t Transition) {
	if b.onEvent != nil {
		t.Shadow = b.shadow.Load()
		b.outbox.queue = append(b.outbox.queue, t)
		b.pending.Store(true)
	}
}

// A call delivers at most maxBatches batches of at most maxBatch events each:
// the oldest events queued when it became the deliverer, and those raised while
// it delivered them, by its hook or by other goroutines. A hook that raises an
// event for every event it receives (say it calls Admit on every Rejection
// while the breaker is open) would otherwise keep the delivering caller busy for
// as long as it keeps doing it. Such a hook never lets the queue empty: every
// call adds its own event to it and delivers at most maxBatches × maxBatch, so
// each call's cost stays bounded while the queue grows by an event a call; the
// leftovers wait for the next call that delivers (see flush).
const (
	maxBatches = 2
	maxBatch   = 256
)

// flush delivers queued events, unless another goroutine is already delivering,
// in which case that goroutine delivers them, or leaves them to the next call.
// Call it without mu held, after any operation that found events queued.
//
// Ordering: events are queued under mu in the order their transitions happened,
// and only the holder of the delivery mutex takes them off the queue, so the hook
// sees them one at a time in that order. A deliverer re-checks the queue after
// releasing the delivery mutex, so an event queued by a goroutine whose TryLock
// failed is delivered by it, within its maxBatches batches; after those it
// returns, and the events still queued are delivered, oldest first, by the next
// call to Admit, Record, Done, Isolate, IsolateFor or Reset, each of which
// flushes whenever it finds the queue not empty.
func (b *Breaker) flush() {
	for range maxBatches {
		if !b.outbox.delivering.TryLock() {
			return
		}
		b.drain()
		b.mu.Lock()
		more := len(b.outbox.queue) > 0
		b.mu.Unlock()
		if !more {
			return
		}
	}
}

// drain delivers one batch: the oldest maxBatch events queued, or all of them.
// Call it with the delivery mutex held; it releases it, even if the hook
// panics. The event the hook panicked on has been delivered; the rest of the
// batch goes back to the front of the queue, ahead of anything queued since,
// for the next call to deliver.
func (b *Breaker) drain() {
	b.mu.Lock()
	batch := b.outbox.queue
	b.outbox.queue, b.outbox.spare = b.outbox.spare, nil
	if len(batch) > maxBatch { // the newest wait for the next batch
		b.outbox.queue = append(b.outbox.queue, batch[maxBatch:]...)
		clear(batch[maxBatch:])
		batch = batch[:maxBatch]
	}
	b.pending.Store(len(b.outbox.queue) > 0)
	b.mu.Unlock()
	delivered := 0
	defer func() {
		if delivered < len(batch) { // the hook panicked: keep what it did not see
			rest := slices.Clone(batch[delivered:])
			b.mu.Lock()
			b.outbox.queue = append(rest, b.outbox.queue...)
			b.pending.Store(true)
			b.mu.Unlock()
		}
		b.outbox.delivering.Unlock()
	}()
	for _, e := range batch {
		delivered++
		b.onEvent(context.Background(), b.source, e)
	}
	clear(batch)
	b.outbox.spare = batch[:0]
}

// flushAdmitting is flush for an admission that is about to hand t to its
// caller. If the hook panics, the caller never receives t, so the admission is
// withdrawn: a probe slot it took is freed at once, rather than held until it
// expires, and nothing is recorded for it (the attempt never ran).
func (b *Breaker) flushAdmitting(t Ticket) {
	if !t.Probe() {
		b.flush()
		return
	}
	handed := false
	defer func() {
		if !handed {
			b.withdraw(t)
		}
	}()
	b.flush()
	handed = true
}

// withdraw frees the probe slot of t. If the slot was already cleared (the
// breaker left HalfOpen meanwhile), there is nothing to free.
func (b *Breaker) withdraw(t Ticket) {
	b.mu.Lock()
	b.probes.release(t.start, t.id)
	b.mu.Unlock()
}

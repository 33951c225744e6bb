package breaker_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/policy/breaker"
)

func TestEventsForEveryTransitionAndRefusal(t *testing.T) {
	r := newRig(t, breaker.Config{ConsecutiveFailures: 1, BreakJitter: breaker.JitterNone})
	runFail(r)                   // closed -> open
	r.refused()                  // rejection
	r.clock.Advance(time.Minute) // (no event: reads do not move it)
	i := r.admit()               // open -> half-open
	r.refused()                  // rejection: slot busy
	r.b.Done(r.ticket[i], ok)    // one success
	runOK(r)                     // half-open -> closed
	r.b.Isolate()                // closed -> isolated
	r.refused()                  // rejection
	r.b.Reset()                  // isolated -> closed
	r.b.Reset()                  // no change, no event
	names := make([]string, 0, len(r.events))
	for _, e := range r.events {
		switch e := e.(type) {
		case breaker.Transition:
			names = append(names, e.From.String()+"->"+e.To.String()+" ("+e.Cause.String()+")")
		case breaker.Rejection:
			names = append(names, "rejected while "+e.State.String())
		}
	}
	assert.Equal(t, []string{
		"closed->open (consecutive failures)",
		"rejected while open",
		"open->half-open (break elapsed)",
		"rejected while half-open",
		"half-open->closed (probes succeeded)",
		"closed->isolated (isolated)",
		"rejected while isolated",
		"isolated->closed (reset)",
	}, names)
	tr := r.events[0].(breaker.Transition)
	assert.Equal(t, 15*time.Second, tr.Break)
	assert.Equal(t, epoch.Add(time.Millisecond), tr.At)
	assert.Equal(t, "breaker.transition", tr.Name())
	rej := r.events[1].(breaker.Rejection)
	assert.Equal(t, 15*time.Second, rej.RetryAfter)
	assert.Equal(t, "breaker.rejection", rej.Name())
}

func TestHookMayCallTheBreaker(t *testing.T) {
	var b *breaker.Breaker
	var seen []breaker.State
	b, err := breaker.New(breaker.Config{
		ConsecutiveFailures: 1,
		Clock:               clockwork.NewFakeClockAt(epoch),
		OnEvent: func(_ context.Context, _ pipeline.Source, e pipeline.Event) {
			seen = append(seen, b.State()) // would deadlock if called under the lock
			if tr, isTr := e.(breaker.Transition); isTr && tr.To == breaker.Open {
				b.Isolate() // queues an event while one is being delivered
			}
		},
	})
	require.NoError(t, err)
	tk, err := b.Admit()
	require.NoError(t, err)
	b.Done(tk, fail)
	assert.Equal(t, []breaker.State{breaker.Open, breaker.Isolated}, seen)
	assert.Equal(t, breaker.Isolated, b.State())
}

func TestPanickingHookDoesNotWedgeDelivery(t *testing.T) {
	calls := 0
	b, err := breaker.New(breaker.Config{
		Clock: clockwork.NewFakeClockAt(epoch),
		OnEvent: func(context.Context, pipeline.Source, pipeline.Event) {
			calls++
			if calls == 1 {
				panic("hook")
			}
		},
	})
	require.NoError(t, err)
	assert.PanicsWithValue(t, "hook", b.Isolate)
	b.Reset()
	assert.Equal(t, 2, calls, "the next event is still delivered")
}

// TestEventsInOrderAcrossGoroutines has many goroutines flip the breaker between
// Isolated and Closed. Delivered in order, every transition starts where the
// previous one ended; the hook never runs twice at once.
func TestEventsInOrderAcrossGoroutines(t *testing.T) {
	var (
		inHook   atomic.Int32
		overlaps atomic.Int32
		log      []breaker.Transition // only the hook touches it: delivery is serial
	)
	b, err := breaker.New(breaker.Config{
		Clock: clockwork.NewFakeClockAt(epoch),
		OnEvent: func(_ context.Context, _ pipeline.Source, e pipeline.Event) {
			if inHook.Add(1) > 1 {
				overlaps.Add(1)
			}
			log = append(log, e.(breaker.Transition))
			inHook.Add(-1)
		},
	})
	require.NoError(t, err)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 500 {
				if (g+i)%2 == 0 {
					b.Isolate()
				} else {
					b.Reset()
				}
			}
		})
	}
	wg.Wait()
	// A deliverer stops after two batches of 256, so the goroutines may have
	// left up to all their 4,000 transitions queued: calls made now deliver
	// them, oldest first, 512 at a time (a Reset of a closed breaker raises
	// nothing of its own).
	for range 4000/512 + 2 {
		b.Reset()
	}
	assert.Zero(t, overlaps.Load())
	require.NotEmpty(t, log)
	assert.Equal(t, breaker.Closed, log[0].From)
	for i := 1; i < len(log); i++ {
		require.Equal(t, log[i-1].To, log[i].From, "event %d out of order", i)
	}
	assert.Equal(t, b.State(), log[len(log)-1].To, "the last event delivered is the last transition")
}

// TestHookAdmittingOnRejectionCannotHoldItsCaller: a hook that calls Admit on
// every Rejection raises one Rejection per Rejection it receives, forever. The
// refused caller that delivers them stops after two batches (the one it found
// and the one its hook raised), on a clock that never moves. Such a hook never
// lets the queue empty, and it grows by an event per refused call, but a batch
// holds at most 256 events, so no caller ever delivers more than 512. What is
// left is delivered first by the next calls, and every refusal's event exactly
// once, in order.
func TestHookAdmittingOnRejectionCannotHoldItsCaller(t *testing.T) {
	const perCall = 2 * 256 // two batches of at most 256 events
	clock := clockwork.NewFakeClockAt(epoch)
	var (
		b         *breaker.Breaker
		hookRuns  int // the hook's calls on a Rejection; delivery is serial
		callStart int // hookRuns when the test's current call began
		refused   int // refused Admits, the hook's included: each raised a Rejection
		log       []pipeline.Event
	)
	admit := func() {
		if _, err := b.Admit(); err != nil {
			refused++
		}
	}
	b, err := breaker.New(breaker.Config{
		ConsecutiveFailures: 1,
		BreakJitter:         breaker.JitterNone,
		Clock:               clock,
		OnEvent: func(_ context.Context, _ pipeline.Source, e pipeline.Event) {
			log = append(log, e)
			if _, isRej := e.(breaker.Rejection); isRej {
				hookRuns++
				if hookRuns-callStart > 10000 { // the old livelock: give up, so the test fails instead of hanging
					return
				}
				admit()
			}
		},
	})
	require.NoError(t, err)
	tk, err := b.Admit()
	require.NoError(t, err)
	b.Done(tk, fail)
	clock.Advance(15*time.Second - 300*time.Millisecond)

	callStart = hookRuns
	admit()
	assert.Equal(t, 2, hookRuns, "the refused caller delivered its own Rejection and the one its hook raised, no more")
	assert.Equal(t, 3, refused)

	// 300 more refusals: the queue outgrows a batch, and each call still
	// delivers at most two batches of 256.
	most := 0
	for range 300 {
		callStart = hookRuns
		admit()
		most = max(most, hookRuns-callStart)
	}
	assert.Equal(t, perCall, most, "the calls that find the queue longest deliver two full batches")

	b.Reset() // closes it: the leftover Rejections' hooks are admitted, raising nothing
	for range 10 {
		if len(log) == refused+2 {
			break
		}
		callStart = hookRuns
		_, err = b.Admit() // a closed breaker's admission delivers what waits
		require.NoError(t, err)
		assert.LessOrEqual(t, hookRuns-callStart, perCall)
	}
	var rejections []breaker.Rejection
	var transitions []breaker.Transition
	for _, e := range log {
		switch e := e.(type) {
		case breaker.Rejection:
			rejections = append(rejections, e)
		case breaker.Transition:
			transitions = append(transitions, e)
		}
	}
	assert.Len(t, rejections, refused, "every refusal's Rejection delivered exactly once")
	require.Len(t, transitions, 2)
	assert.Equal(t, breaker.CauseConsecutiveFailures, transitions[0].Cause)
	assert.Equal(t, breaker.CauseReset, transitions[1].Cause)
	assert.IsType(t, breaker.Transition{}, log[len(log)-1], "the Reset's transition comes after every Rejection queued before it")
	assert.Equal(t, breaker.Closed, b.State())
}

// TestHookChainLeftoversDeliveredByClosedAdmit: a hook that answers every
// transition to Closed by isolating and resetting the breaker again raises two
// events per event, beyond what one call delivers. The leftovers are delivered
// by the next call, even an admission to a closed breaker.
func TestHookChainLeftoversDeliveredByClosedAdmit(t *testing.T) {
	var (
		b      *breaker.Breaker
		rounds int
		log    []breaker.Transition
	)
	b, err := breaker.New(breaker.Config{
		Clock: clockwork.NewFakeClockAt(epoch),
		OnEvent: func(_ context.Context, _ pipeline.Source, e pipeline.Event) {
			tr := e.(breaker.Transition)
			log = append(log, tr)
			if tr.To == breaker.Closed && rounds < 3 {
				rounds++
				b.Isolate()
				b.Reset()
			}
		},
	})
	require.NoError(t, err)
	b.Isolate() // closed -> isolated
	b.Reset()   // isolated -> closed, and its hook's round 1; round 2 is left
	assert.Len(t, log, 4, "the Reset delivered two batches")
	assert.Equal(t, breaker.Closed, b.State())
	_, err = b.Admit()
	require.NoError(t, err)
	require.Len(t, log, 8, "the admission delivered round 2, then round 3, which raised nothing")
	for i := 1; i < len(log); i++ {
		assert.Equal(t, log[i-1].To, log[i].From, "event %d out of order", i)
	}
}

// TestPanickingHookKeepsTheRestOfItsBatch: a batch of two events, whose first
// makes the hook panic. The panic reaches the delivering caller, and the second
// event is not dropped: the next call delivers it, before its own.
func TestPanickingHookKeepsTheRestOfItsBatch(t *testing.T) {
	var (
		started = make(chan struct{})
		release = make(chan struct{})
		log     []string // only the hook touches it: delivery is serial
	)
	b, err := breaker.New(breaker.Config{
		Clock: clockwork.NewFakeClockAt(epoch),
		OnEvent: func(_ context.Context, _ pipeline.Source, e pipeline.Event) {
			tr := e.(breaker.Transition)
			log = append(log, tr.From.String()+"->"+tr.To.String())
			switch len(log) {
			case 1:
				close(started)
				<-release // hold the delivery while two more events queue up
			case 2:
				panic("hook")
			}
		},
	})
	require.NoError(t, err)
	panicked := make(chan any)
	go func() {
		defer func() { panicked <- recover() }()
		b.Isolate() // closed -> isolated; this goroutine delivers
	}()
	<-started
	b.Reset()   // isolated -> closed: queued behind the delivery in progress
	b.Isolate() // closed -> isolated: the same batch
	close(release)
	assert.Equal(t, "hook", <-panicked, "the panic reaches the delivering caller")
	b.Reset() // delivers the rest of the batch, then its own event
	assert.Equal(t, []string{"closed->isolated", "isolated->closed", "closed->isolated", "isolated->closed"}, log)
}

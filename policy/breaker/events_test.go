package breaker_test

import (
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
		OnEvent: func(e pipeline.Event) {
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
		OnEvent: func(pipeline.Event) {
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
		OnEvent: func(e pipeline.Event) {
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
	assert.Zero(t, overlaps.Load())
	require.NotEmpty(t, log)
	assert.Equal(t, breaker.Closed, log[0].From)
	for i := 1; i < len(log); i++ {
		require.Equal(t, log[i-1].To, log[i].From, "event %d out of order", i)
	}
	assert.Equal(t, b.State(), log[len(log)-1].To, "the last event delivered is the last transition")
}

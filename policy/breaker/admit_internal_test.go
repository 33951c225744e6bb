package breaker

import (
	"context"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/outcome"
)

// A closed breaker with no event waiting admits without its lock: Admit
// returns while another goroutine holds mu. Once an event waits for
// delivery, or the breaker is not closed, admission takes the lock again,
// so that Admit delivers what waits (flush's promise) and decides what a
// state other than Closed needs deciding.
func TestAClosedBreakerAdmitsWithoutItsLock(t *testing.T) {
	var delivered []string
	b, err := New(Config{Clock: clockwork.NewFakeClock(), ConsecutiveFailures: 1,
		OnEvent: func(_ context.Context, _ pipeline.Source, e pipeline.Event) { delivered = append(delivered, e.Name()) }})
	require.NoError(t, err)

	b.mu.Lock()
	done := make(chan error)
	go func() {
		_, err := b.Admit()
		done <- err
	}()
	select {
	case err := <-done:
		require.NoError(t, err, "admitted while another goroutine held the lock")
	case <-time.After(time.Minute): // a bound that turns a deadlock into a failure, not a wait
		b.mu.Unlock()
		t.Fatal("Admit waited for the lock of a closed breaker")
	}
	b.mu.Unlock()

	// An event waits: the next Admit takes the lock and delivers it.
	b.mu.Lock()
	b.emit(Rejection{State: Closed})
	b.mu.Unlock()
	assert.True(t, b.pending.Load())
	tk, err := b.Admit()
	require.NoError(t, err)
	assert.Equal(t, []string{"breaker.rejection"}, delivered, "Admit delivered the waiting event")
	assert.False(t, b.pending.Load())

	// Open: the closed word is down, and admission decides under the lock.
	b.Done(tk, outcome.Verdict{Kind: outcome.Transient})
	require.Equal(t, Open, b.State())
	assert.False(t, b.closed.Load())
	_, err = b.Admit()
	assert.Error(t, err, "refused while open")
	b.Reset()
	assert.True(t, b.closed.Load(), "Reset closes it: the lock-free path again")
}

package breaker_test

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/breaker"
)

// TestHammer runs many goroutines on one breaker, through Admit/Done and through
// a pipeline. Each round has a chaos phase (random outcomes from every goroutine)
// and a probe storm: the breaker is tripped, its break allowed to end, and every
// goroutine asks for admission at once while the probes admitted hold their
// slots. The clock only moves between phases, so no slot expires mid-phase: the
// probes admitted in a storm are all concurrent, and there must be exactly
// HalfOpenProbes of them.
func TestHammer(t *testing.T) {
	const (
		probes     = 3
		goroutines = 16
	)
	clock := clockwork.NewFakeClockAt(epoch)
	var transitions atomic.Int64
	b, err := breaker.New(breaker.Config{
		ConsecutiveFailures: 4,
		FailureRatio:        0.5,
		MinimumCalls:        10,
		HalfOpenProbes:      probes,
		ProbeSuccesses:      3,
		BreakDuration:       time.Second,
		MaxBreakDuration:    4 * time.Second,
		Clock:               clock,
		OnEvent: func(e pipeline.Event) {
			if _, isTr := e.(breaker.Transition); isTr {
				transitions.Add(1)
			}
		},
	})
	require.NoError(t, err)
	p := pipeline.New(breaker.Guard[int](b))
	verdicts := []outcome.Verdict{ok, ok, fail, fail, throttled, permanent}

	chaos := func(round int) {
		var wg sync.WaitGroup
		for g := range goroutines {
			wg.Go(func() {
				rng := rand.New(rand.NewPCG(uint64(round), uint64(g)))
				for i := range 50 {
					v := verdicts[rng.IntN(len(verdicts))]
					if i%2 == 0 {
						if tk, err := b.Admit(); err == nil {
							b.Done(tk, v)
						}
						continue
					}
					_, _ = p.Execute(context.Background(), func(context.Context) (int, error) {
						if v.Kind == outcome.OK {
							return 1, nil
						}
						return 0, outcome.Mark(errBoom, v)
					})
				}
			})
		}
		wg.Wait()
	}

	storm := func(round int) (admitted int64) {
		var asked, wg sync.WaitGroup
		var inFlight, peak, n atomic.Int64
		asked.Add(goroutines)
		for g := range goroutines {
			wg.Go(func() {
				tk, err := b.Admit()
				if err == nil {
					n.Add(1)
					assert.True(t, tk.Probe(), "a half-open breaker admits only probes")
					c := inFlight.Add(1)
					for m := peak.Load(); c > m && !peak.CompareAndSwap(m, c); m = peak.Load() {
					}
				}
				asked.Done()
				asked.Wait() // every goroutine has asked while the probes hold their slots
				if err == nil {
					inFlight.Add(-1)
					b.Done(tk, verdicts[(round+g)%2+1]) // ok or fail
				}
			})
		}
		wg.Wait()
		assert.Equal(t, int64(probes), peak.Load(), "round %d: concurrent probes", round)
		return n.Load()
	}

	for round := range 40 {
		chaos(round)
		assert.LessOrEqual(t, b.Snapshot().Probes, probes)
		b.Reset()
		for range 4 {
			tk, err := b.Admit()
			require.NoError(t, err)
			b.Done(tk, fail)
		}
		require.Equal(t, breaker.Open, b.State())
		clock.Advance(4 * time.Second)
		require.Equal(t, breaker.HalfOpen, b.State())
		assert.Equal(t, int64(probes), storm(round), "round %d: probes admitted", round)
		clock.Advance(time.Duration(round%5) * time.Second)
	}
	assert.Greater(t, transitions.Load(), int64(160), "the breaker moved")
}

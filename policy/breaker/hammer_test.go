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
// HalfOpenProbes of them. Meanwhile a reader polls the measured normals, which
// the attempts feed with durations from microseconds to seconds, and Reset
// between rounds must leave them as they were.
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
		stop := make(chan struct{})
		var reader sync.WaitGroup
		reader.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if d, known := b.NormalLatency(); known {
					assert.GreaterOrEqual(t, d, time.Duration(0))
				}
				if r, known := b.NormalFailureRate(); known {
					assert.True(t, r >= 0 && r <= 1, "rate %v", r)
				}
				s := b.Snapshot()
				assert.True(t, s.FailureTripPoint <= 0.5, "trip point %v above FailureRatio", s.FailureTripPoint)
			}
		})
		defer func() { close(stop); reader.Wait() }()
		for g := range goroutines {
			wg.Go(func() {
				rng := rand.New(rand.NewPCG(uint64(round), uint64(g)))
				for i := range 50 {
					v := verdicts[rng.IntN(len(verdicts))]
					switch i % 3 {
					case 0:
						if tk, err := b.Admit(); err == nil {
							b.Done(tk, v)
						}
						continue
					case 1:
						if tk, err := b.Admit(); err == nil {
							b.Record(tk, v, time.Duration(rng.Int64N(int64(2*time.Second))))
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
		before := b.Snapshot()
		assert.LessOrEqual(t, before.Probes, probes)
		b.Reset()
		after := b.Snapshot()
		assert.Equal(t, before.NormalLatencyOK, after.NormalLatencyOK, "Reset keeps the normal latency")
		assert.Equal(t, before.NormalLatency, after.NormalLatency, "Reset keeps the normal latency")
		assert.Equal(t, before.NormalFailureRate, after.NormalFailureRate, "Reset keeps the normal failure rate")
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
	_, known := b.NormalLatency()
	assert.True(t, known, "the successes of the last rounds make a normal latency")
}

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
// between rounds must leave them as they were. The breaker has a recovery ramp,
// so a round whose probes all succeed leaves it Recovering for the next
// round's chaos.
func TestHammer(t *testing.T) {
	const (
		probes     = 3
		goroutines = 16
	)
	clock := clockwork.NewFakeClockAt(epoch)
	var transitions, ramps atomic.Int64
	b, err := breaker.New(breaker.Config{
		ConsecutiveFailures: 4,
		FailureRatio:        0.5,
		MinimumCalls:        10,
		HalfOpenProbes:      probes,
		ProbeSuccesses:      3,
		BreakDuration:       time.Second,
		MaxBreakDuration:    4 * time.Second,
		Recovery:            &breaker.Recovery{},
		Clock:               clock,
		OnEvent: func(_ context.Context, _ pipeline.Source, e pipeline.Event) {
			if tr, isTr := e.(breaker.Transition); isTr {
				transitions.Add(1)
				if tr.To == breaker.Recovering {
					ramps.Add(1)
				}
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
					v := verdicts[(round+g)%2+1] // ok or fail
					if round%4 == 0 {
						v = ok // every probe succeeds: the ramp starts
					}
					b.Done(tk, v)
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
		for range 5 { // successes while Closed, so that the normal latency is known at the end
			tk, err := b.Admit()
			require.NoError(t, err)
			b.Record(tk, ok, time.Millisecond)
		}
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
	assert.Positive(t, ramps.Load(), "some rounds ramped")
	_, known := b.NormalLatency()
	assert.True(t, known, "the successes of the rounds make a normal latency")
}

// TestHammerRamp runs goroutines against a recovering breaker. The clock only
// moves between phases, so within a phase p changes only by the outcomes
// recorded, and deficit accounting makes the count admitted independent of the
// interleaving: with p held at 1/8 by fast outcomes, 1024 concurrent offers
// admit exactly 128. Then slow outcomes race to halve p (it must stay within
// its terms and never trip), every admitted attempt of a phase fails at once
// (exactly one re-opens the breaker, with the grown break; the rest are
// stragglers), and Isolate and Reset race the ramp. A reader checks the
// invariants throughout, and the transitions must form one chain.
func TestHammerRamp(t *testing.T) {
	const (
		goroutines = 16
		offers     = 64
	)
	clock := clockwork.NewFakeClockAt(epoch)
	var (
		mu    sync.Mutex
		chain []breaker.Transition
	)
	b, err := breaker.New(breaker.Config{
		ConsecutiveFailures: 1,
		MinimumCalls:        1, // a closed breaker would trip on a single slow call
		BreakDuration:       time.Second,
		BreakJitter:         breaker.JitterNone,
		SlowCallThreshold:   100 * time.Millisecond,
		SlowCalls:           breaker.SlowCalls{Disabled: true},
		Recovery:            &breaker.Recovery{Fraction: 1, Initial: 0.125},
		Clock:               clock,
		OnEvent: func(_ context.Context, _ pipeline.Source, e pipeline.Event) {
			if tr, isTr := e.(breaker.Transition); isTr {
				mu.Lock()
				chain = append(chain, tr)
				mu.Unlock()
			}
		},
	})
	require.NoError(t, err)

	// phase runs every goroutine's offers at once, while a reader checks the
	// ramp's invariants (and, if the phase cannot leave Recovering, that it
	// does not); each admitted attempt ends as do says. It returns the number
	// admitted.
	phase := func(stays bool, do func(g int, tk breaker.Ticket)) int64 {
		var admitted atomic.Int64
		var wg, reader sync.WaitGroup
		stop := make(chan struct{})
		reader.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				s := b.Snapshot()
				if !stays && s.State != breaker.Recovering {
					continue
				}
				assert.Equal(t, breaker.Recovering, s.State)
				assert.True(t, s.RampFraction >= 0.125 && s.RampFraction < 1, "fraction %v", s.RampFraction)
				if stays {
					assert.Equal(t, 1.0, b.Pressure())
				}
			}
		})
		for g := range goroutines {
			wg.Go(func() {
				for range offers {
					if tk, err := b.Admit(); err == nil {
						admitted.Add(1)
						do(g, tk)
					}
				}
			})
		}
		wg.Wait()
		close(stop)
		reader.Wait()
		return admitted.Load()
	}
	toRamp := func() {
		b.Reset()
		tk, err := b.Admit()
		require.NoError(t, err)
		b.Record(tk, fail, 0)
		clock.Advance(time.Second)
		for range 2 {
			tk, err := b.Admit()
			require.NoError(t, err)
			b.Record(tk, ok, 0)
		}
		require.Equal(t, breaker.Recovering, b.State())
	}

	for round := range 10 {
		toRamp()
		n := phase(true, func(_ int, tk breaker.Ticket) { b.Record(tk, ok, time.Millisecond) })
		assert.Equal(t, int64(goroutines*offers/8), n, "round %d: admitted at p = 1/8", round)

		clock.Advance(500 * time.Millisecond)
		phase(true, func(g int, tk breaker.Ticket) {
			d := time.Millisecond
			if g%4 == 0 {
				d = time.Second
			}
			b.Record(tk, ok, d)
		})
		phase(true, func(_ int, tk breaker.Ticket) { b.Record(tk, ok, time.Second) })
		s := b.Snapshot()
		require.Equal(t, breaker.Recovering, s.State, "round %d: slow calls stall a ramp, never trip it", round)
		assert.True(t, s.RampHeld, "round %d: slow calls hold the ramp", round)
		assert.Equal(t, 0.5625, s.RampFraction, "round %d: where it stood at the first slow call", round)

		var inflight [goroutines][]breaker.Ticket
		phase(true, func(g int, tk breaker.Ticket) { inflight[g] = append(inflight[g], tk) })
		var wg sync.WaitGroup
		for g := range goroutines {
			wg.Go(func() {
				for _, tk := range inflight[g] {
					b.Done(tk, fail)
				}
			})
		}
		wg.Wait()
		s = b.Snapshot()
		assert.Equal(t, breaker.Open, s.State, "round %d", round)
		assert.Equal(t, 2, s.Trips, "round %d: one failure re-opened it; the others were stragglers", round)
		assert.Equal(t, 2*time.Second, s.Break, "round %d: the grown break", round)

		clock.Advance(2 * time.Second)
		for range 2 {
			if tk, err := b.Admit(); err == nil {
				b.Record(tk, ok, 0)
			}
		}
		require.Equal(t, breaker.Recovering, b.State(), "round %d", round)
		phase(false, func(g int, tk breaker.Ticket) {
			switch g {
			case 0:
				b.Isolate()
			case 1:
				b.Reset()
			}
			b.Record(tk, ok, time.Millisecond)
		})
	}
	mu.Lock()
	defer mu.Unlock()
	recovering := 0
	for i, tr := range chain {
		if i > 0 {
			require.Equal(t, chain[i-1].To, tr.From, "transition %d", i)
		}
		if tr.To == breaker.Recovering {
			recovering++
		}
		if tr.From == breaker.Recovering && tr.To == breaker.Open {
			assert.Equal(t, breaker.CauseRampFailed, tr.Cause)
		}
	}
	assert.Equal(t, 20, recovering, "two ramps a round")
}

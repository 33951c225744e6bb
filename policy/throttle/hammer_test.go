package throttle_test

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/throttle"
)

// TestHammerTheStage runs many goroutines through one throttle stage on
// real time (with its own randomly seeded source), with work that succeeds,
// fails, is throttled, is canceled and panics, while another goroutine
// reads the probability. Every call ends as the work's result or the
// throttle's refusal, the probability never leaves [0, MaxRejection], and
// the counts are exactly the refusals and the answers that count: nothing
// leaves a two-minute window while the test runs.
func TestHammerTheStage(t *testing.T) {
	th := mustNew(t, throttle.Config{})
	p := pipeline.New(throttle.Guard[int](th))
	var refused, counted, accepted atomic.Int64
	stop := make(chan struct{})
	var reader sync.WaitGroup
	reader.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if p := th.RejectionProbability(); p < 0 || p > throttle.DefaultMaxRejection {
				t.Errorf("probability %v", p)
			}
			r, a := th.Counts()
			if a < 0 || a > r {
				t.Errorf("counts (%d, %d)", r, a)
			}
			runtime.Gosched()
		}
	})
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			for i := range 500 {
				ctx, cancel := context.WithCancel(context.Background())
				func() {
					defer func() { _ = recover() }()
					_, err := p.Execute(ctx, func(ctx context.Context) (int, error) {
						// Of the 8 calls in 10 that count, 5 are not
						// accepted: more than 1 in K = 2, so the throttle
						// refuses whatever the interleaving.
						switch (g*7 + i) % 10 {
						case 0, 1, 2, 7:
							counted.Add(1)
							return 0, outcome.MarkTransient(errDown)
						case 3:
							counted.Add(1)
							return 0, outcome.MarkThrottled(errDown, 0)
						case 4:
							counted.Add(1)
							accepted.Add(1)
							return 0, outcome.MarkPermanent(errDown)
						case 5:
							cancel()
							return 0, ctx.Err()
						case 6:
							panic("boom")
						}
						counted.Add(1)
						accepted.Add(1)
						return 1, nil
					})
					if errors.Is(err, pipeline.DependencyUnavailable) {
						refused.Add(1)
					} else if err != nil && !errors.Is(err, errDown) && !errors.Is(err, context.Canceled) {
						t.Errorf("Execute returned %v", err)
					}
				}()
				cancel()
			}
		})
	}
	wg.Wait()
	close(stop)
	reader.Wait()
	requests, accepts := th.Counts()
	assert.Equal(t, refused.Load()+counted.Load(), int64(requests), "every refusal and every answer that counts")
	assert.Equal(t, accepted.Load(), int64(accepts))
	assert.Positive(t, refused.Load(), "five of the eight calls in ten that count are not accepted: the throttle refuses some")
	t.Logf("%d refused, %d requests, %d accepts, probability %.3f", refused.Load(), requests, accepts, th.RejectionProbability())
}

// TestHammerAdmitAndRecord has many goroutines admit and record on one
// throttle, holding their tickets for a while, while another advances its
// fake clock a slice at a time: the counts stay consistent whatever the
// interleaving, and a window after the last call they are empty.
func TestHammerAdmitAndRecord(t *testing.T) {
	clock := clockwork.NewFakeClock()
	const window = time.Minute
	th := mustNew(t, throttle.Config{Clock: clock, Window: window, Buckets: 6})
	verdicts := []outcome.Verdict{{}, {Kind: outcome.Transient}, {Kind: outcome.Throttled}, {Kind: outcome.Permanent},
		{Kind: outcome.Permanent, Canceled: true}, {Kind: outcome.Throttled, SelfImposed: true}}
	stop := make(chan struct{})
	var ticker sync.WaitGroup
	ticker.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			clock.Advance(window / 6)
			runtime.Gosched()
		}
	})
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			var held []throttle.Ticket
			for i := range 2000 {
				if tk, err := th.Admit(); err == nil {
					held = append(held, tk)
				}
				if len(held) > (g+i)%5 {
					th.Record(held[0], verdicts[(g+i)%len(verdicts)])
					held = held[1:]
				}
				if p := th.RejectionProbability(); p < 0 || p > throttle.DefaultMaxRejection {
					t.Errorf("probability %v", p)
				}
				if r, a := th.Counts(); a < 0 || a > r {
					t.Errorf("counts (%d, %d)", r, a)
				}
			}
			for _, tk := range held {
				th.Record(tk, verdicts[1])
			}
		})
	}
	wg.Wait()
	close(stop)
	ticker.Wait()
	clock.Advance(window)
	requests, accepts := th.Counts()
	assert.Zero(t, requests)
	assert.Zero(t, accepts)
	assert.Zero(t, th.RejectionProbability())
}

package ratelimit_test

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/policy/ratelimit"
)

// TestHammerAllow has many goroutines take tokens from one limiter while
// another advances its fake clock: whatever the interleaving, no more than
// Rate × elapsed + Burst are admitted, and since the clock moves on only once
// the bucket is empty, every token earned is taken.
func TestHammerAllow(t *testing.T) {
	clock := clockwork.NewFakeClock()
	const rate, burst = 1000, 50
	l := mustNew(t, ratelimit.Config{Rate: rate, Burst: burst, Clock: clock})
	var admitted atomic.Int64
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, ok := l.Allow(); ok {
					admitted.Add(1)
				} else {
					runtime.Gosched()
				}
			}
		})
	}
	const steps, step = 200, 5 * time.Millisecond
	for range steps {
		for l.Tokens() >= 1 {
			runtime.Gosched() // the goroutines empty the bucket before time moves on
		}
		clock.Advance(step)
	}
	close(stop)
	wg.Wait()
	elapsed := steps * step
	bound := int64(rate*elapsed.Seconds()) + burst
	assert.LessOrEqual(t, admitted.Load(), bound)
	for { // what is left, no goroutine racing for it
		if _, ok := l.Allow(); !ok {
			break
		}
		admitted.Add(1)
	}
	assert.Equal(t, bound, admitted.Load(), "no token earned is lost")
}

// TestHammerWaits runs many calls through the stage on real time, some of
// which give up their wait, and checks the same bound on what ran.
func TestHammerWaits(t *testing.T) {
	if testing.Short() {
		t.Skip("runs for about 100 ms of real time")
	}
	const rate, burst = 2000, 10
	l := mustNew(t, ratelimit.Config{Rate: rate, Burst: burst, MaxWait: 5 * time.Millisecond})
	p := pipeline.New(ratelimit.Guard[int](l))
	var ran atomic.Int64
	work := func(context.Context) (int, error) { ran.Add(1); return 1, nil }
	start := time.Now()
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			for i := range 40 {
				ctx, cancel := context.WithCancel(context.Background())
				if (g+i)%3 == 0 {
					cancel() // some give up at once, some mid-wait below
				} else if (g+i)%3 == 1 {
					time.AfterFunc(time.Millisecond, cancel)
				}
				_, _ = p.Execute(ctx, work)
				cancel()
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	assert.LessOrEqual(t, ran.Load(), int64(rate*elapsed.Seconds())+burst)
	assert.Positive(t, ran.Load())
}

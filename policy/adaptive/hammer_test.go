package adaptive_test

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/adaptive"
)

// TestHammer runs many goroutines through one limiter on real time, revised
// every millisecond, with calls that succeed, fail, are throttled, give up
// while queued and panic, and checks that never more calls are inside than
// the largest limit it had, that every call ends as a success, a failure, a
// refusal or an interruption, and that every slot is given back.
func TestHammer(t *testing.T) {
	l := mustNew(t, adaptive.Config{InitialLimit: 8, MaxLimit: 16, MaxQueue: 8, MaxWait: time.Millisecond, Interval: time.Millisecond, MinSamples: 1})
	var revisions atomic.Int32
	p := pipeline.New(adaptive.Guard[int](l)).With(pipeline.Options[int]{
		OnEvent: func(_ context.Context, _ pipeline.Source, e pipeline.Event) {
			if _, ok := e.(adaptive.Revision); ok {
				revisions.Add(1)
			}
		},
	})
	var inside, peak atomic.Int32
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			for i := range 150 {
				ctx, cancel := context.WithCancel(context.Background())
				if (g+i)%9 == 0 {
					time.AfterFunc(20*time.Microsecond, cancel)
				}
				func() {
					defer func() { _ = recover() }()
					_, err := p.Execute(ctx, func(context.Context) (int, error) {
						n := inside.Add(1)
						defer inside.Add(-1)
						for {
							p := peak.Load()
							if n <= p || peak.CompareAndSwap(p, n) {
								break
							}
						}
						runtime.Gosched()
						switch (g * i) % 13 {
						case 1:
							return 0, outcome.MarkThrottled(errors.New("slow down"), 0)
						case 2:
							panic("boom")
						}
						return 1, nil
					})
					_ = err
				}()
				cancel()
			}
		})
	}
	wg.Wait()
	assert.LessOrEqual(t, peak.Load(), int32(16), "never more calls inside than MaxLimit")
	assert.Equal(t, 0, l.InFlight(), "every slot was given back")
	assert.Equal(t, 0, l.Queued())
	t.Logf("peak %d, limit now %d, %d revisions reported", peak.Load(), l.Limit(), revisions.Load())
}

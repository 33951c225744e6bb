package bulkhead_test

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
	"github.com/resilience-go/pipeline/policy/bulkhead"
)

// TestHammer runs many goroutines through one bulkhead on real time, with
// calls that queue, give up, time out, panic and move the limit, and checks
// that never more calls are inside than the limit, that every call ends as a
// success, a refusal or an interruption, and that every slot is given back.
func TestHammer(t *testing.T) {
	const limit = 4
	b := mustNew(t, bulkhead.Config{MaxConcurrent: limit, MaxQueue: 8, MaxWait: 2 * time.Millisecond})
	p := pipeline.New(bulkhead.Guard[int](b))
	var inside, peak atomic.Int32
	work := func(ctx context.Context) (int, error) {
		n := inside.Add(1)
		defer inside.Add(-1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		runtime.Gosched()
		return 1, nil
	}
	var served, refused, interrupted atomic.Int32
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			for i := range 200 {
				ctx, cancel := context.WithCancel(context.Background())
				if (g+i)%7 == 0 {
					time.AfterFunc(50*time.Microsecond, cancel)
				}
				func() {
					defer func() { _ = recover() }()
					fn := work
					if (g+i)%31 == 0 {
						fn = func(context.Context) (int, error) { panic("boom") }
					}
					_, err := p.Execute(ctx, fn)
					stop, isStop := errors.AsType[*pipeline.StopError](err)
					switch {
					case err == nil:
						served.Add(1)
					case isStop && stop.Reason == pipeline.Canceled:
						interrupted.Add(1)
					case isStop:
						refused.Add(1)
					default:
						t.Errorf("unexpected error %v", err)
					}
				}()
				cancel()
			}
		})
	}
	wg.Wait()
	assert.LessOrEqual(t, peak.Load(), int32(limit), "never more calls inside than the limit")
	assert.Positive(t, served.Load())
	assert.Equal(t, 0, b.InFlight(), "every slot was given back")
	assert.Equal(t, 0, b.Queued())
	t.Logf("served %d, refused %d, interrupted %d, peak %d", served.Load(), refused.Load(), interrupted.Load(), peak.Load())
}

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
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/criticality"
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

// TestHammerWithTenants runs calls of three tenants and none, of every
// level, through one bulkhead with a TenantShare on real time, with calls
// that queue, give up and time out, and checks that no tenant ever had more
// calls inside than its bound, and that every slot came back to its
// tenant: each can take its bound again.
func TestHammerWithTenants(t *testing.T) {
	const limit, bound = 4, 2
	b := mustNew(t, bulkhead.Config{MaxConcurrent: limit, MaxQueue: 8, MaxWait: 2 * time.Millisecond, TenantShare: 0.5})
	p := pipeline.New(bulkhead.Guard[int](b))
	tenants := []string{"a", "b", "c", ""}
	var inside [4]atomic.Int32
	var over atomic.Int32
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			for i := range 200 {
				who := (g + i) % len(tenants)
				ctx := criticality.WithTenant(criticality.With(context.Background(), criticality.Level(1+i%3)), tenants[who])
				ctx, cancel := context.WithCancel(ctx)
				if (g+i)%5 == 0 {
					time.AfterFunc(20*time.Microsecond, cancel)
				}
				_, _ = p.Execute(ctx, func(context.Context) (int, error) {
					if n := inside[who].Add(1); who < 3 && n > bound {
						over.Add(1)
					}
					runtime.Gosched()
					inside[who].Add(-1)
					return 1, nil
				})
				cancel()
			}
		})
	}
	wg.Wait()
	assert.Zero(t, over.Load(), "a tenant had more calls inside than its bound")
	assert.Equal(t, 0, b.InFlight(), "every slot was given back")
	assert.Equal(t, 0, b.Queued())
	for _, tenant := range tenants[:3] {
		// Critical calls, whose level never gives way: the refusals of the
		// last second may still squeeze the others.
		ctx := criticality.WithTenant(criticality.With(context.Background(), criticality.Critical), tenant)
		for range bound {
			_, ok := b.TryAcquire(ctx)
			require.True(t, ok, "tenant %s has its slots back", tenant)
		}
		for range bound {
			b.Release(ctx)
		}
	}
}

package registry

import (
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline/pipelinetest"
)

// hammerValue is a value of the hammer test: one lifetime of a key.
type hammerValue struct {
	key     int
	evicted atomic.Int32 // OnEvict calls for this lifetime
}

// TestHammer shares one registry of 16 keys between 16 goroutines asking for
// 64 keys (a few hot, most cold), on virtual time with IdleAfter 50 ms, while
// New sometimes takes a virtual millisecond, fails or panics. Run it under
// -race. It checks that
//
//   - the registry never holds more than MaxKeys keys, seen from New, OnEvict
//     and a goroutine sampling Len and Range;
//   - New runs at most once at a time per key, and only for a key not held;
//   - every Get returns a value of its own key or New's error or panic;
//   - OnEvict is called exactly once for every lifetime no longer held, and
//     never for one still held;
//   - no goroutine outlives the calls.
func TestHammer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		before := pipelinetest.Goroutines()
		const maxKeys, keys, workers, gets = 16, 64, 16, 400
		errDown := errors.New("down")
		var (
			reg        *Registry[int, *hammerValue]
			building   [keys]atomic.Int32 // News running per key
			built      atomic.Int64       // lifetimes built
			evictions  atomic.Int64       // OnEvict calls
			overflow   atomic.Int64       // Len above MaxKeys, wherever seen
			newsCalled atomic.Int64
		)
		checkLen := func() {
			if reg.Len() > maxKeys {
				overflow.Add(1)
			}
		}
		reg, err := New(Config[int, *hammerValue]{
			New: func(key int) (*hammerValue, error) {
				if building[key].Add(1) != 1 {
					t.Errorf("two News of key %d at once", key)
				}
				defer building[key].Add(-1)
				reg.mu.Lock()
				_, held := reg.held[key]
				reg.mu.Unlock()
				if held {
					t.Errorf("New of key %d, which is held", key)
				}
				checkLen()
				switch n := newsCalled.Add(1); {
				case n%7 == 0:
					time.Sleep(time.Millisecond) // virtual: others wait for this New
				case n%11 == 0:
					return nil, errDown
				case n%23 == 0:
					panic(errDown)
				}
				built.Add(1)
				return &hammerValue{key: key}, nil
			},
			MaxKeys:   maxKeys,
			IdleAfter: 50 * time.Millisecond,
			OnEvict: func(key int, v *hammerValue) {
				evictions.Add(1)
				if v.key != key || v.evicted.Add(1) != 1 {
					t.Errorf("OnEvict(%d, %+v): wrong key or twice", key, v)
				}
				checkLen()
			},
		})
		require.NoError(t, err)

		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				r := rand.New(rand.NewPCG(uint64(w), 1))
				for i := range gets {
					key := r.IntN(keys)
					if r.IntN(2) == 0 {
						key %= 4 // hot keys
					}
					v, err := get(reg, key)
					switch {
					case errors.Is(err, errDown):
					case err != nil || v == nil || v.key != key:
						t.Errorf("Get(%d) = %+v, %v", key, v, err)
					}
					if i%50 == 0 {
						time.Sleep(time.Duration(r.IntN(20)) * time.Millisecond) // virtual
					}
				}
			})
		}
		sampled := make(chan struct{})
		wg.Go(func() {
			defer close(sampled)
			for range 500 {
				checkLen()
				seen := map[int]bool{}
				for k := range reg.Range {
					if seen[k] {
						t.Errorf("Range visits key %d twice", k)
					}
					seen[k] = true
				}
				if len(seen) > maxKeys {
					overflow.Add(1)
				}
				time.Sleep(100 * time.Microsecond) // virtual
			}
		})
		wg.Wait()
		<-sampled

		assert.Zero(t, overflow.Load(), "the registry held more than MaxKeys keys")
		var held int64
		for k, v := range reg.Range {
			held++
			assert.Equal(t, k, v.key)
			assert.Zero(t, v.evicted.Load(), "OnEvict for key %d, which is held", k)
		}
		assert.Equal(t, int64(reg.Len()), held)
		checkRead(t, reg)
		assert.Equal(t, built.Load(), evictions.Load()+held, "every lifetime built is held or was evicted")
		assert.Greater(t, built.Load(), int64(keys), "keys were evicted and rebuilt")
		synctest.Wait()
		assert.Equal(t, before, pipelinetest.Goroutines(), "no goroutine outlives the calls")
	})
}

// get calls reg.Get, turning New's panic into its error.
func get(reg *Registry[int, *hammerValue], key int) (v *hammerValue, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = p.(error)
		}
	}()
	return reg.Get(key)
}

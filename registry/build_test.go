package registry_test

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline/registry"
)

func TestGetErrorStoresNothing(t *testing.T) {
	errDown := errors.New("down")
	calls := 0
	reg, err := registry.New(registry.Config[string, *int]{
		New: func(string) (*int, error) {
			calls++
			if calls == 1 {
				return new(int), errDown
			}
			return new(int), nil
		},
		OnEvict: func(string, *int) { t.Error("OnEvict called for a key never stored") },
	})
	require.NoError(t, err)
	v, err := reg.Get("a")
	assert.ErrorIs(t, err, errDown)
	assert.Nil(t, v, "the zero V with the error")
	assert.Equal(t, 0, reg.Len())
	v, err = reg.Get("a")
	require.NoError(t, err)
	assert.NotNil(t, v)
	assert.Equal(t, 2, calls, "the next Get calls New again")
	assert.Equal(t, 1, reg.Len())
}

// TestConcurrentFirstUseCallsNewOnce starts Gets of one key while its New is
// running: they wait for that one call and share its value, or its error.
func TestConcurrentFirstUseCallsNewOnce(t *testing.T) {
	for _, fail := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			errDown := errors.New("down")
			release := make(chan struct{})
			var calls atomic.Int32
			reg, err := registry.New(registry.Config[string, *int]{New: func(string) (*int, error) {
				calls.Add(1)
				<-release
				if fail {
					return nil, errDown
				}
				return new(int), nil
			}})
			require.NoError(t, err)
			const callers = 8
			got := make([]*int, callers)
			errs := make([]error, callers)
			var wg sync.WaitGroup
			for i := range callers {
				wg.Go(func() { got[i], errs[i] = reg.Get("a") })
			}
			synctest.Wait() // every caller is in Get: one in New, the others waiting for it
			assert.Equal(t, int32(1), calls.Load())
			close(release)
			wg.Wait()
			for i := range callers {
				if fail {
					assert.ErrorIs(t, errs[i], errDown)
				} else {
					require.NoError(t, errs[i])
					assert.Same(t, got[0], got[i])
				}
			}
			assert.Equal(t, int32(1), calls.Load(), "New once for all of them")
		})
	}
}

// TestPanicInNewDoesNotWedgeTheKey: the panic reaches the Get that called New;
// the Gets that waited for it start over, and one of them calls New again.
func TestPanicInNewDoesNotWedgeTheKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		var calls atomic.Int32
		reg, err := registry.New(registry.Config[string, *int]{New: func(string) (*int, error) {
			if calls.Add(1) == 1 {
				<-release
				panic("New panics")
			}
			return new(int), nil
		}})
		require.NoError(t, err)
		var wg sync.WaitGroup
		wg.Go(func() {
			assert.PanicsWithValue(t, "New panics", func() { _, _ = reg.Get("a") })
		})
		synctest.Wait()
		const waiters = 4
		got := make([]*int, waiters)
		for i := range waiters {
			wg.Go(func() {
				v, err := reg.Get("a")
				assert.NoError(t, err)
				got[i] = v
			})
		}
		synctest.Wait()
		close(release)
		wg.Wait()
		assert.Equal(t, int32(2), calls.Load(), "one panicking call, then one for all the waiters")
		for i := range waiters {
			assert.Same(t, got[0], got[i])
		}
		v, err := reg.Get("a")
		require.NoError(t, err)
		assert.Same(t, got[0], v)
	})
}

// TestCallbacksRunWithoutLock calls every method of the registry from New and
// OnEvict: a lock held around them would deadlock.
func TestCallbacksRunWithoutLock(t *testing.T) {
	var reg *registry.Registry[int, int]
	var inNew, inEvict, evicted []int
	reg, err := registry.New(registry.Config[int, int]{
		New: func(key int) (int, error) {
			inNew = append(inNew, reg.Len())
			if key == 1 {
				if _, err := reg.Get(0); err != nil { // another key
					return 0, err
				}
			}
			return key, nil
		},
		MaxKeys: 2,
		OnEvict: func(key, v int) {
			evicted = append(evicted, key)
			n := 0
			for range reg.Range {
				n++
			}
			if key < 100 { // one level: an insertion from OnEvict evicts in turn
				_, err := reg.Get(100 + key)
				assert.NoError(t, err)
			}
			inEvict = append(inEvict, n)
		},
	})
	require.NoError(t, err)
	v, err := reg.Get(1) // New(1) calls Get(0)
	require.NoError(t, err)
	assert.Equal(t, 1, v)
	// Get(5) evicts 0, whose OnEvict inserts 100, evicting 1, whose OnEvict
	// inserts 101, evicting 5, whose OnEvict inserts 105, evicting 100.
	_, err = reg.Get(5)
	require.NoError(t, err)
	assert.Equal(t, []int{0, 0, 2, 2, 2, 2}, inNew, "Len from New(1), New(0), New(5), New(100), New(101), New(105)")
	assert.Equal(t, []int{0, 1, 5, 100}, evicted)
	assert.Equal(t, []int{2, 2, 2, 2}, inEvict, "Range from each OnEvict")
	var held []int
	for k := range reg.Range {
		held = append(held, k)
	}
	assert.Equal(t, []int{105, 101}, held)
}

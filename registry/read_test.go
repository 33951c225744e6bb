package registry

import (
	"strconv"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// checkRead asserts the invariant of r.read: each entry it holds is held, the
// same entry, or marked gone.
func checkRead[K comparable, V any](t *testing.T, r *Registry[K, V]) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	for k, e := range *r.read.Load() {
		if e.state.Load()&gone == 0 {
			assert.Same(t, r.held[k], e, "read serves key %v, which is not held", k)
		} else {
			assert.NotSame(t, r.held[k], e, "key %v marked gone but held", k)
		}
	}
}

// inRead reports whether read serves key.
func inRead[K comparable, V any](r *Registry[K, V], key K) bool {
	e := (*r.read.Load())[key]
	return e != nil && e.state.Load()&gone == 0
}

// TestReadCopyCatchesUp: a key inserted after the copy was made is served
// without the lock after at most Len slow Gets, and the evicted entries the
// copy still holds are let go after at most Len+1 more.
func TestReadCopyCatchesUp(t *testing.T) {
	clock := clockwork.NewFakeClock()
	r, err := New(Config[string, int]{New: func(k string) (int, error) { return len(k), nil }, MaxKeys: 64, IdleAfter: time.Minute, Clock: clock})
	require.NoError(t, err)
	for i := range 40 {
		_, err := r.Get("k" + strconv.Itoa(i))
		require.NoError(t, err)
		checkRead(t, r)
	}
	_, err = r.Get("hot")
	require.NoError(t, err)
	n := r.Len()
	slow := 0
	for !inRead(r, "hot") {
		_, err := r.Get("hot")
		require.NoError(t, err)
		slow++
		require.LessOrEqual(t, slow, n, "still not in read after Len slow Gets")
	}
	checkRead(t, r)

	clock.Advance(time.Minute) // the next insertion evicts the 40 idle keys; hot was used since it was seen
	_, err = r.Get("new")
	require.NoError(t, err)
	assert.Equal(t, 2, r.Len())
	assert.Len(t, *r.read.Load(), 41, "read made before the insertion")
	checkRead(t, r)
	for i := 0; len(*r.read.Load()) > r.Len(); i++ {
		require.LessOrEqual(t, i, r.Len()+1, "read keeps evicted entries")
		_, err := r.Get("new")
		require.NoError(t, err)
	}
	checkRead(t, r)
	assert.True(t, inRead(r, "new"))
}

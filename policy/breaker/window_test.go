package breaker

import (
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"

	conf "github.com/resilience-go/pipeline/internal/breakerconf"
)

func TestWindowSlidesBucketByBucket(t *testing.T) {
	t0 := instant(time.Hour)                          // any origin
	w := newWindow(t0, 30*time.Second, 10)            // 3 s buckets
	w.add(t0, true, false)                            // bucket 0
	w.add(t0.Add(2999*time.Millisecond), false, true) // bucket 0
	w.add(t0.Add(3*time.Second), true, true)          // bucket 1
	assert.Equal(t, bucket{calls: 3, failures: 2, slow: 2}, w.total)

	w.rotate(t0.Add(29999 * time.Millisecond)) // bucket 9: bucket 0 still in
	assert.Equal(t, 3, w.total.calls)
	w.rotate(t0.Add(30 * time.Second)) // bucket 10 replaces bucket 0
	assert.Equal(t, bucket{calls: 1, failures: 1, slow: 1}, w.total)
	w.rotate(t0.Add(33 * time.Second)) // bucket 11 replaces bucket 1
	assert.Equal(t, bucket{}, w.total)

	w.add(t0.Add(40*time.Second), true, false)
	w.rotate(t0.Add(time.Hour)) // a jump past the whole window clears it
	assert.Equal(t, bucket{}, w.total)
	w.add(t0.Add(time.Hour), false, false)
	assert.Equal(t, bucket{calls: 1}, w.total)

	w.rotate(t0.Add(time.Minute)) // never backwards
	assert.Equal(t, bucket{calls: 1}, w.total)
	w.reset()
	assert.Equal(t, bucket{}, w.total)
	assert.Equal(t, int64(0), w.index(t0.Add(-time.Second)))
}

// TestBaselineSizes pins the memory docs/breaker.md gives for the failure
// baseline (and for a trip window of 10 buckets), on 64-bit platforms.
func TestBaselineSizes(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("sizes are documented for 64-bit platforms")
	}
	assert.Equal(t, uintptr(88), unsafe.Sizeof(window{}))
	assert.Equal(t, uintptr(24), unsafe.Sizeof(bucket{}))
	assert.Equal(t, 88+conf.BaselineSlices*24, int(unsafe.Sizeof(window{})+conf.BaselineSlices*unsafe.Sizeof(bucket{})))
}

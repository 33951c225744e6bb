package latency

import (
	"sync"
	"testing"
	"time"

	"github.com/resilience-go/pipeline/internal/histogram"
	"github.com/stretchr/testify/assert"
)

// TestEstimatorHammer shares one estimator between writers, readers and a
// goroutine moving the fake clock forward. The clock moves 20 s in all, less
// than the 27 s the default window always holds, so no sample expires and the
// final count is exact. Run it under -race.
func TestEstimatorHammer(t *testing.T) {
	const writers, perWriter, readers, reads = 8, 2000, 4, 2000
	e, clock := newFakeEstimator(t, Config{})
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range perWriter {
				e.Record(e.Now(), time.Duration(1+(w*perWriter+i)%50)*ms) // 1..50 ms
			}
		})
	}
	bad := make(chan string, readers)
	for range readers {
		wg.Go(func() {
			for i := range reads {
				q := []float64{0.5, 0.95}[i%2]
				d, n := e.Quantile(e.Now(), q)
				switch {
				case n < 0 || n > writers*perWriter:
					bad <- "sample count out of range"
					return
				case n == 0 && d != 0:
					bad <- "a value without samples"
					return
				case n > 0 && (histogram.Bucket(d) < histogram.Bucket(ms) || histogram.Bucket(d) > histogram.Bucket(50*ms)):
					bad <- "a quantile outside the recorded range: " + d.String()
					return
				}
			}
		})
	}
	wg.Go(func() {
		for range 2000 {
			clock.Advance(10 * ms)
		}
	})
	wg.Wait()
	close(bad)
	for msg := range bad {
		t.Error(msg)
	}
	d, n := e.Quantile(e.Now(), 0.5)
	assert.Equal(t, writers*perWriter, n)
	assert.Equal(t, histogram.Bucket(25*ms), histogram.Bucket(d), "median of a uniform 1..50 ms")
}

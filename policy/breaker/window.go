package breaker

import "time"

// window counts evidence samples in a ring of buckets: the trip window, and the
// failure baseline of the relative trip. Bucket k covers
// [origin + k*width, origin + (k+1)*width); the window at time t is the bucket
// holding t and the len(buckets)-1 before it. It is rotated on write only: the
// trips are only evaluated when a sample is recorded, and a reader between writes
// ([Breaker.Pressure], [Breaker.Snapshot]) sums what is still inside with at. It
// is not safe for concurrent use; the breaker's lock guards it.
type window struct {
	origin  instant
	width   time.Duration
	head    int64   // absolute index of the newest bucket
	cur     int     // head's index in buckets: head % len(buckets)
	end     instant // where the bucket after head begins: a sample before it needs no rotation
	buckets []bucket
	total   bucket // the sum of buckets
}

// bucket holds the samples of one slice of the window.
type bucket struct {
	calls, failures, slow int
}

func newWindow(origin instant, span time.Duration, n int) *window {
	width := span / time.Duration(n)
	return &window{origin: origin, width: width, end: origin.Add(width), buckets: make([]bucket, n)}
}

// index returns the absolute bucket index of t. Times before the origin fall in
// bucket 0.
func (w *window) index(t instant) int64 {
	d := t.Sub(w.origin)
	if d < 0 {
		return 0
	}
	return int64(d / w.width)
}

// rotate drops the buckets that have slid out of the window by now. Within the
// newest bucket it costs one comparison, which add makes before calling it.
func (w *window) rotate(now instant) {
	if now.Before(w.end) {
		return
	}
	k := w.index(now)
	if k <= w.head {
		return
	}
	n := int64(len(w.buckets))
	if k-w.head >= n {
		clear(w.buckets)
		w.total = bucket{}
	} else {
		for i := w.head + 1; i <= k; i++ {
			b := &w.buckets[i%n]
			w.total.calls -= b.calls
			w.total.failures -= b.failures
			w.total.slow -= b.slow
			*b = bucket{}
		}
	}
	w.head = k
	w.cur = int(k % n)
	w.end = w.origin.Add(time.Duration(k+1) * w.width)
}

// at returns the window's counts as of now without rotating it, for readers.
func (w *window) at(now instant) bucket {
	k := w.index(now)
	n := int64(len(w.buckets))
	if k <= w.head {
		return w.total
	}
	var sum bucket
	for i := max(w.head-n+1, k-n+1, 0); i <= w.head; i++ {
		b := w.buckets[i%n]
		sum.calls += b.calls
		sum.failures += b.failures
		sum.slow += b.slow
	}
	return sum
}

// add records one evidence sample at now.
func (w *window) add(now instant, failure, slow bool) {
	if !now.Before(w.end) {
		w.rotate(now)
	}
	b := &w.buckets[w.cur]
	b.calls++
	w.total.calls++
	if failure {
		b.failures++
		w.total.failures++
	}
	if slow {
		b.slow++
		w.total.slow++
	}
}

// reset forgets every sample.
func (w *window) reset() {
	clear(w.buckets)
	w.total = bucket{}
}

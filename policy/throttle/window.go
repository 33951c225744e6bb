package throttle

import "time"

// window counts requests and accepts in a ring of slices. Slice k covers
// [k × width, (k+1) × width) on the throttle's clock (time since New); the
// window at time t is the slice holding t and the len(slices)-1 before it.
// It is rotated when the throttle writes; a reader between writes sums what
// is still inside with at. It is not safe for concurrent use: the
// throttle's lock guards it.
type window struct {
	width  time.Duration
	head   int64 // absolute index of the newest slice
	slices []counts
	total  counts // the sum of slices
}

// counts are the requests and accepts of a slice, or of a window.
type counts struct {
	requests, accepts int
}

func newWindow(span time.Duration, n int) *window {
	return &window{width: span / time.Duration(n), slices: make([]counts, n)}
}

// index returns the absolute index of the slice that holds now (now >= 0).
func (w *window) index(now time.Duration) int64 { return int64(now / w.width) }

// rotate drops the slices that have slid out of the window by now.
func (w *window) rotate(now time.Duration) {
	k := w.index(now)
	if k <= w.head {
		return
	}
	n := int64(len(w.slices))
	if k-w.head >= n {
		clear(w.slices)
		w.total = counts{}
	} else {
		for i := w.head + 1; i <= k; i++ {
			s := &w.slices[i%n]
			w.total.requests -= s.requests
			w.total.accepts -= s.accepts
			*s = counts{}
		}
	}
	w.head = k
}

// holds reports whether slice k is still inside the window, as rotated.
func (w *window) holds(k int64) bool { return k <= w.head && k > w.head-int64(len(w.slices)) }

// add counts one request in slice k, which the window holds, and one accept
// if accepted.
func (w *window) add(k int64, accepted bool) {
	s := &w.slices[k%int64(len(w.slices))]
	s.requests++
	w.total.requests++
	if accepted {
		s.accepts++
		w.total.accepts++
	}
}

// at returns the window's counts as of now without rotating it, for readers.
func (w *window) at(now time.Duration) counts {
	k := w.index(now)
	if k <= w.head {
		return w.total
	}
	n := int64(len(w.slices))
	var sum counts
	for i := max(w.head-n+1, k-n+1, 0); i <= w.head; i++ {
		s := w.slices[i%n]
		sum.requests += s.requests
		sum.accepts += s.accepts
	}
	return sum
}

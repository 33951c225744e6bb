package main

import (
	"context"
	"math"
	"sync/atomic"
	"time"
)

// faults is what the fake upstreams do wrong: the share of requests they
// fail, the share they answer slowly and how slowly, and a recurring outage
// during which they fail everything. Each fake keeps its own count of
// requests (see judge) and picks the failing and the slow ones evenly
// spread (see picked), so that a share of 0.02 is every 50th request, not
// a draw: a test knows which requests fail. The share of failures may be
// changed while the fakes run (setFail); faults is safe for concurrent use.
type faults struct {
	fail atomic.Uint64 // share of requests failed, as math.Float64bits
	slow atomic.Uint64 // share of the requests not failed answered after slowFor, likewise

	// slowFor is how long a slow request waits before its answer.
	slowFor time.Duration
	// outage is how long, at the end of every outageEvery since start, the
	// fakes fail every request; zero for no outage.
	outage, outageEvery time.Duration
	start               time.Time
}

// newFaults returns faults that fail the share fail of requests, answer the
// share slow of the others after slowFor, and fail everything for the last outage
// of every outageEvery (none if outage is zero).
func newFaults(fail, slow float64, slowFor, outage, outageEvery time.Duration) *faults {
	f := &faults{slowFor: slowFor, outage: outage, outageEvery: outageEvery, start: time.Now()}
	f.setFail(fail)
	f.slow.Store(math.Float64bits(slow))
	return f
}

// setFail makes the fakes fail the share s of their requests from now on.
func (f *faults) setFail(s float64) { f.fail.Store(math.Float64bits(s)) }

// verdict is what a fake does with a request: fail it, or answer it
// after wait.
type verdict struct {
	fail bool
	wait time.Duration
}

// judge returns the judge of one fake's requests, to be called once for
// each request as it arrives, at now. It fails the share of requests the
// faults say, and every request during an outage; it slows down the share
// of the remaining ones the faults say. Each judge counts its own
// requests; it is safe for concurrent use.
func (f *faults) judge() func(now time.Time) verdict {
	var requests, answered atomic.Uint64
	return func(now time.Time) verdict {
		if f.inOutage(now) || picked(requests.Add(1), math.Float64frombits(f.fail.Load())) {
			return verdict{fail: true}
		}
		if picked(answered.Add(1), math.Float64frombits(f.slow.Load())) {
			return verdict{wait: f.slowFor}
		}
		return verdict{}
	}
}

// inOutage reports whether now falls in an outage: the last f.outage of
// every f.outageEvery since the fakes started.
func (f *faults) inOutage(now time.Time) bool {
	if f.outage <= 0 || f.outageEvery <= 0 {
		return false
	}
	return now.Sub(f.start)%f.outageEvery >= f.outageEvery-f.outage
}

// picked reports whether the n-th request (from 1) is among the share s of
// requests picked evenly: it is when n*s crosses an integer, so a share of
// 0.25 picks requests 4, 8, 12, ..., a share of 1 picks every request and a
// share of 0 none.
func picked(n uint64, s float64) bool {
	if s <= 0 || n == 0 {
		return false
	}
	if s >= 1 {
		return true
	}
	return math.Floor(float64(n)*s) != math.Floor(float64(n-1)*s)
}

// pause waits d, or until ctx is done (a hedge's loser, a caller gone),
// and reports whether it waited all of d.
func pause(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

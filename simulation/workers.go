package simulation

import (
	"container/heap"
	"fmt"
	"time"
)

// Workers is a dependency with Count workers that serve its attempts first
// come, first served: an attempt that arrives while every worker is busy
// waits inside the dependency for the first to come free. Its Base model
// says how long each attempt keeps a worker (its answer for the moment the
// attempt arrives), and how the attempt ends; the latency the caller sees is
// the wait plus that. So Workers serve at most Count attempts at once, and
// Count / (mean service time) a second: offered more, their queue grows, and
// with it the latency of every attempt.
//
// The workers do not know when a caller stops waiting: an attempt the client
// cut at its limit still keeps a worker for its whole service time, as work
// that nobody cancels does in a real server. A queue that grows past the
// callers' timeouts therefore costs the dependency work that serves nobody.
//
// Count has no default: it must be positive.
type Workers struct {
	// Base says how long an attempt keeps a worker and how it ends. Nil means
	// Healthy{}.
	Base Model
	// Count is the number of workers.
	Count int
}

// Start validates w and returns its state for one run.
func (w Workers) Start() (Dependency, error) {
	if w.Count <= 0 {
		return nil, fmt.Errorf("simulation: Workers.Count must be positive, got %d", w.Count)
	}
	base, err := startBase(w.Base)
	if err != nil {
		return nil, err
	}
	return &workers{base: base, free: make(freeAt, w.Count)}, nil
}

// Faults returns the faults of w's base.
func (w Workers) Faults() []Interval { return faultsOf(w.Base) }

type workers struct {
	base Dependency
	free freeAt // when each worker comes free, earliest first
}

// Respond queues the attempt for the worker that comes free first. Attempts
// arrive in order of time, so first come is first served.
func (w *workers) Respond(a Attempt) Response {
	r := w.base.Respond(a)
	end := max(a.At, w.free[0]) + r.Latency
	w.free[0] = end
	heap.Fix(&w.free, 0)
	r.Latency = min(end-a.At, maxLatency)
	return r
}

// freeAt is a min-heap of the times the workers come free.
type freeAt []time.Duration

func (f freeAt) Len() int           { return len(f) }
func (f freeAt) Less(i, j int) bool { return f[i] < f[j] }
func (f freeAt) Swap(i, j int)      { f[i], f[j] = f[j], f[i] }
func (f *freeAt) Push(x any)        { *f = append(*f, x.(time.Duration)) }

func (f *freeAt) Pop() any {
	old := *f
	x := old[len(old)-1]
	*f = old[:len(old)-1]
	return x
}

package retry

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/resilience-go/pipeline"
)

// fixedSource always returns the same value: 0 draws the low end of every jitter
// range, math.MaxUint64 the high end.
type fixedSource uint64

func (s fixedSource) Uint64() uint64 { return uint64(s) }

var (
	lowest  rand.Source = fixedSource(0)
	highest rand.Source = fixedSource(math.MaxUint64)
)

// lockedSource makes a seeded generator safe for concurrent use, for
// reproducible runs with many callers.
type lockedSource struct {
	mu  sync.Mutex
	src *rand.PCG
}

func newLockedSource(seed uint64) *lockedSource {
	return &lockedSource{src: rand.NewPCG(seed, seed)}
}

func (s *lockedSource) Uint64() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.src.Uint64()
}

// events collects what a pipeline's stages emit. It is safe for concurrent use.
type events struct {
	mu   sync.Mutex
	list []pipeline.Event
}

func (e *events) hook(_ context.Context, _ pipeline.Source, ev pipeline.Event) {
	e.mu.Lock()
	e.list = append(e.list, ev)
	e.mu.Unlock()
}

// scheduled returns the Scheduled events, in order.
func (e *events) scheduled() []Scheduled {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []Scheduled
	for _, ev := range e.list {
		if s, ok := ev.(Scheduled); ok {
			out = append(out, s)
		}
	}
	return out
}

// stops returns the stop errors of the Stopped events, in order.
func (e *events) stops() []*pipeline.StopError {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []*pipeline.StopError
	for _, ev := range e.list {
		if s, ok := ev.(pipeline.Stopped); ok {
			out = append(out, s.Err)
		}
	}
	return out
}

// work is a Func that returns what results says for each attempt in turn (the
// last entry repeats) and records when each attempt started, since start, on the
// real clock, which is virtual inside a synctest bubble.
type work struct {
	mu      sync.Mutex
	start   time.Time
	results []func(ctx context.Context) (int, error)
	at      []time.Duration
}

func newWork(results ...func(ctx context.Context) (int, error)) *work {
	return &work{start: time.Now(), results: results}
}

func (w *work) fn(ctx context.Context) (int, error) {
	w.mu.Lock()
	i := min(len(w.at), len(w.results)-1)
	w.at = append(w.at, time.Since(w.start))
	f := w.results[i]
	w.mu.Unlock()
	return f(ctx)
}

// attempts returns when each attempt started.
func (w *work) attempts() []time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]time.Duration(nil), w.at...)
}

func fail(err error) func(context.Context) (int, error) {
	return func(context.Context) (int, error) { return 0, err }
}

func succeed(v int) func(context.Context) (int, error) {
	return func(context.Context) (int, error) { return v, nil }
}

// ms lists durations in milliseconds.
func ms(list ...int) []time.Duration {
	out := make([]time.Duration, len(list))
	for i, m := range list {
		out[i] = time.Duration(m) * time.Millisecond
	}
	return out
}

// mustNew builds a retry stage or fails the test.
func mustNew[T any](t testing.TB, cfg Config) *Policy[T] {
	t.Helper()
	p, err := New[T](cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// stopError returns err as a *pipeline.StopError or fails the test.
func stopError(t testing.TB, err error) *pipeline.StopError {
	t.Helper()
	e, ok := errors.AsType[*pipeline.StopError](err)
	if !ok {
		t.Fatalf("error %v (%T) is not a *pipeline.StopError", err, err)
	}
	return e
}

package fleet

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/fleet/internal/quorum"
	"github.com/resilience-go/pipeline/policy/breaker"
)

// Errors of Watch, Isolate and Reset.
var (
	// ErrClosed is returned by Watch after Close.
	ErrClosed = errors.New("fleet: closed")
	// ErrUnnamed is returned for a breaker without Config.Name, or an empty
	// name: the name is what the fleet's processes agree on.
	ErrUnnamed = errors.New("fleet: the breaker has no name")
)

// Fleet shares the state of named circuit breakers among the processes of a
// service through Redis, by quorum: when enough of the processes seen
// recently report a dependency open, the others stop calling it too, and an
// operator can isolate a dependency fleet-wide. Each process keeps its own
// breakers and its own recovery; Redis is read and written only by the
// fleet's background goroutine (and once by Watch), never on the call path.
//
// A Fleet is safe for concurrent use. Close stops its goroutine.
type Fleet struct {
	s      settings
	source pipeline.Source
	ctx    context.Context // cancelled by Close: bounds every round's commands
	cancel context.CancelFunc
	done   chan struct{} // closed when the loop has returned
	once   sync.Once     // Close

	// mu guards the fields below. No Redis command and no user code (the
	// hook, a breaker's methods, which deliver the breaker's events) runs
	// with it held.
	mu         sync.Mutex
	watched    map[string]*watch // by breaker name; a watch is reserved before it is ready
	closed     bool
	degraded   bool      // the latest round failed
	degradedAt time.Time // when the outage was first seen

	rounds atomic.Int64 // rounds the loop has finished, for tests
}

// watch is one breaker the fleet watches.
type watch struct {
	b     *breaker.Breaker
	name  string
	keys  keys
	ready bool        // guarded by Fleet.mu: the loop may run it
	gone  atomic.Bool // stop was called: apply nothing more

	// The fields below are owned by whichever goroutine runs the watch's
	// rounds: the caller of Watch until ready is set, then the loop.
	member    quorum.Member // the break the fleet forced last, and whether its isolation is applied
	published byte          // the state of the latest report Redis took, 0 if unknown
	pruned    time.Time     // when this process last pruned the breaker's reports
	pruneIn   time.Duration // how long after pruned it prunes again (see settings.pruneAfter)
	quiet     bool          // the latest round read no open report and no isolation (see queued)
}

// New builds a Fleet from cfg and starts its goroutine; it refuses an
// impossible Config with every problem named (see Config.Validate).
func New(cfg Config) (*Fleet, error) {
	s, err := cfg.settings()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	f := &Fleet{s: s, source: pipeline.Source{Stage: "fleet", Name: s.namespace}, ctx: ctx, cancel: cancel,
		done: make(chan struct{}), watched: make(map[string]*watch)}
	go f.loop()
	return f, nil
}

// Process returns the id this process publishes under (Config.Process or its
// default).
func (f *Fleet) Process() string { return f.s.process }

// Watch shares b, which must have a name, with the fleet: from the next
// round on, this process publishes b's state under that name and applies
// the fleet's view to it. Before returning, Watch reads the view once, for
// at most half of Config.Refresh, and applies it, so a process started
// during a fleet-wide outage starts with b open; if Redis does not answer
// in time, Watch raises Degraded and returns anyway.
//
// stop ends the watch: the fleet touches b no more (a round already
// running may apply its decision once more; a break the fleet forced runs
// out by itself) and deletes this process's report, for at most half of
// Config.Refresh. stop may be called more than once.
func (f *Fleet) Watch(b *breaker.Breaker) (stop func(), err error) {
	if b == nil {
		return nil, errors.New("fleet: Watch: nil breaker")
	}
	name := b.Name()
	if err := checkName(name); err != nil {
		return nil, err
	}
	w := &watch{b: b, name: name, keys: keysOf(f.s.namespace, name)}
	f.mu.Lock()
	switch {
	case f.closed:
		f.mu.Unlock()
		return nil, ErrClosed
	case f.watched[name] != nil:
		f.mu.Unlock()
		return nil, fmt.Errorf("fleet: Watch: a breaker named %q is already watched", name)
	}
	f.watched[name] = w
	f.mu.Unlock()

	f.round([]*watch{w}, false)
	f.mu.Lock()
	w.ready = true
	f.mu.Unlock()

	var once sync.Once
	return func() { once.Do(func() { f.unwatch(w) }) }, nil
}

func checkName(name string) error {
	switch {
	case name == "":
		return ErrUnnamed
	case strings.ContainsAny(name, "{}"):
		return fmt.Errorf("fleet: the breaker's name must not contain '{' or '}' (they would break the keys' hash tags), got %q", name)
	}
	return nil
}

func (f *Fleet) unwatch(w *watch) {
	w.gone.Store(true)
	f.mu.Lock()
	if f.watched[w.name] == w {
		delete(f.watched, w.name)
	}
	closed := f.closed
	f.mu.Unlock()
	if !closed { // Close deletes the reports of the breakers it finds
		f.forget([]*watch{w})
	}
}

// forget deletes this process's reports of ws, bounded by the round timeout,
// so that it stops being counted at once rather than after TTL.
func (f *Fleet) forget(ws []*watch) {
	if len(ws) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), f.s.timeout())
	defer cancel()
	pipe := f.s.redis.Pipeline()
	for _, w := range ws {
		for _, k := range []string{w.keys.seen, w.keys.open, w.keys.following} {
			pipe.ZRem(ctx, k, f.s.process)
		}
	}
	_, _ = pipe.Exec(ctx) // best effort: the reports expire after TTL anyway
}

// Close stops the fleet's goroutine, waits for it, and deletes this
// process's reports (for at most half of Config.Refresh). The breakers keep
// their state: a break the fleet forced runs out by itself, and a fleet-wide
// isolation stays until their Reset. Close does not close Config.Redis. It
// may be called more than once.
func (f *Fleet) Close() {
	f.once.Do(func() {
		f.mu.Lock()
		f.closed = true
		ws := make([]*watch, 0, len(f.watched))
		for _, w := range f.watched {
			ws = append(ws, w)
			w.gone.Store(true)
		}
		f.mu.Unlock()
		f.cancel()
		<-f.done
		f.forget(ws)
	})
}

// Isolate sets the fleet-wide isolation of the breakers named name: every
// process watching one isolates it (Breaker.Isolate) within one refresh,
// and keeps it isolated, even if it is reset locally, until Reset. A process
// that starts watching one meanwhile isolates it before Watch returns.
func (f *Fleet) Isolate(ctx context.Context, name string) error {
	if err := checkName(name); err != nil {
		return err
	}
	k := keysOf(f.s.namespace, name)
	_, err := f.s.redis.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, k.control, isolateValue, 0)
		p.ZAdd(ctx, k.open, redis.Z{Score: math.Inf(1), Member: marker})
		return nil
	})
	if err != nil {
		return fmt.Errorf("fleet: Isolate %q: %w", name, err)
	}
	return nil
}

// Reset clears the fleet-wide isolation of the breakers named name: every
// process that applied it resets its breaker (Breaker.Reset) within one
// refresh. Breakers open on their own evidence are left alone.
func (f *Fleet) Reset(ctx context.Context, name string) error {
	if err := checkName(name); err != nil {
		return err
	}
	k := keysOf(f.s.namespace, name)
	_, err := f.s.redis.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Del(ctx, k.control)
		p.ZRem(ctx, k.open, marker)
		return nil
	})
	if err != nil {
		return fmt.Errorf("fleet: Reset %q: %w", name, err)
	}
	return nil
}

// Degraded reports whether the latest round failed to reach Redis.
func (f *Fleet) Degraded() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.degraded
}

func (f *Fleet) emit(e pipeline.Event) {
	if f.s.onEvent != nil {
		f.s.onEvent(context.Background(), f.source, e)
	}
}

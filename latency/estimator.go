package latency

import (
	"sync"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/resilience-go/pipeline/internal/clock"
	"github.com/resilience-go/pipeline/internal/histogram"
)

// Estimator is a sliding-window latency histogram with its own lock and
// clock: a live latency quantile
// that many goroutines and stages can share. Build one with [New] per dependency;
// the hedge stage reads its delay from it, and whoever measures attempts feeds
// it.
//
// Times are durations elapsed on the estimator's clock since it was built: read
// one with [Estimator.Now], typically the same reading that ended the attempt
// being recorded. An Estimator is non-generic, so one can serve pipelines of
// different result types. The zero Estimator is not usable: build one with
// [New]. Every method of an Estimator that New did not build panics with a
// message naming New, before taking any lock. An Estimator is safe for
// concurrent use; one mutex guards the window, held only for the few
// nanoseconds of an update or a read.
type Estimator struct {
	// Immutable after New.
	elapsed clock.Elapsed // the clock, read as the time since New; see Now
	name    string
	// window is Config.Window with its default: always positive, so a zero
	// window is an Estimator New did not build. Every method checks it first,
	// before it takes mu.
	window time.Duration

	mu sync.Mutex // guards w
	w  histogram.Window
}

// notBuilt is the panic of every use of an Estimator that [New] did not build.
const notBuilt = "latency: Estimator used without latency.New (its zero value is not usable)"

// New returns an empty estimator configured by cfg, or an error naming every
// impossible setting in cfg.
func New(cfg Config) (*Estimator, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	w, err := histogram.New(cfg.Window, cfg.Slices)
	if err != nil {
		return nil, err // unreachable: cfg is valid
	}
	e := &Estimator{elapsed: clock.Elapsed{Clock: cfg.Clock}, name: cfg.Name, window: cfg.Window, w: *w}
	e.elapsed.Start()
	return e, nil
}

// Name returns the estimator's name (Config.Name).
func (e *Estimator) Name() string { return e.name }

// Now returns the time elapsed on the estimator's clock since the estimator was
// built (clock.Elapsed: on real time it reads only the monotonic clock, which
// is cheaper than time.Now and never runs backwards; an estimator built
// outside a synctest bubble and used inside it runs on the bubble's time).
func (e *Estimator) Now() time.Duration {
	if e.window == 0 {
		panic(notBuilt)
	}
	return e.elapsed.Read()
}

// From returns what Now would have returned at r, a reading of the
// estimator's clock that a pipeline took (pipeline.Next.Entered), without
// reading the clock again: for a stage whose pipeline's clock is the
// estimator's (pipeline.Next.SharesClock with [Estimator.Clock]).
func (e *Estimator) From(r time.Duration) time.Duration {
	if e.window == 0 {
		panic(notBuilt)
	}
	return e.elapsed.From(r)
}

// Clock is the estimator's clock (Config.Clock): nil for real time.
func (e *Estimator) Clock() clockwork.Clock { return e.elapsed.Clock }

// Record adds one latency sample d observed at now, a reading of [Estimator.Now].
// A negative d counts as 0; a now earlier than one already seen counts as the
// latest one seen. It costs one bucket computation and three increments,
// plus a rotation when now has moved into a later slice.
func (e *Estimator) Record(now, d time.Duration) {
	if e.window == 0 {
		panic(notBuilt)
	}
	e.mu.Lock()
	e.w.Add(now, d)
	e.mu.Unlock()
}

// Quantile returns the q-th quantile of the samples recorded over the window
// ending at now, and how many samples back it; 0, 0 means "no estimate". q is
// clamped to [0, 1]; callers validate q in their own configuration. The result
// is memoized and may miss up to samples/32 of the newest samples; the count is
// exact. With no samples it returns 0, 0: a duration of 0 with samples 0
// means "no estimate", never a measured 0. The quantile is the sample of
// rank ceil(q x samples), placed within its bucket by the bucket's mean, so
// a latency that holds steady reads as itself.
func (e *Estimator) Quantile(now time.Duration, q float64) (d time.Duration, samples int) {
	if e.window == 0 {
		panic(notBuilt)
	}
	e.mu.Lock()
	d, samples = e.w.Quantile(now, q)
	e.mu.Unlock()
	return d, samples
}

// Window returns how far back the estimator looks: Config.Window, or
// [DefaultWindow] if that was 0.
func (e *Estimator) Window() time.Duration {
	if e.window == 0 {
		panic(notBuilt)
	}
	return e.window
}

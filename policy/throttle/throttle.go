package throttle

import (
	"math"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/criticality"
	"github.com/resilience-go/pipeline/internal/clock"
	"github.com/resilience-go/pipeline/internal/kind"
	"github.com/resilience-go/pipeline/outcome"
)

// refusal is the reason of the throttle's stop errors. The throttle refuses
// because the dependency has been rejecting our calls, as a breaker does: the
// refusal is news about the dependency, not about a limit of ours (which
// pipeline.RateLimited and pipeline.ConcurrencyLimited say).
const refusal = pipeline.DependencyUnavailable

// Throttle is the client-side adaptive throttle of the Google SRE book: it
// counts, over a sliding window, the requests it was asked to admit and the
// accepts, the requests the dependency processed, and refuses each new
// attempt with the probability
//
//	max(0, (requests - K × accepts) / (requests + 1))
//
// capped at Config.MaxRejection. Build one with [New] per dependency and
// share it: it is not generic, so pipelines of different result types can
// share one, and [Guard] makes it a stage. Code outside a pipeline (the
// simulation) uses [Throttle.Admit] and [Throttle.Record].
//
// A Throttle is safe for concurrent use. One mutex guards the window and the
// random source; the Rand source is the only code of the caller's that runs
// while it is held (the Clock is read before it is taken). The zero Throttle
// is not usable.
type Throttle struct {
	// Immutable after New.
	name         string
	k            float64
	maxRejection float64
	// clock reads the throttle's times, as durations since New (see
	// clock.Elapsed).
	clock clock.Elapsed
	// refused is the stop error of every refusal. A refusal carries no
	// retry-after hint (see Admit), so one error serves them all and
	// refusing allocates nothing.
	refused *pipeline.StopError

	// mu guards the fields below it.
	mu   sync.Mutex
	last time.Duration // the latest clock reading written under mu
	w    window
	rng  *rand.Rand
}

// New returns a throttle configured by cfg, with empty counts (it refuses
// nothing until it has seen rejections), or an error naming every impossible
// setting in cfg.
func New(cfg Config) (*Throttle, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	src := cfg.Rand
	if src == nil {
		src = rand.NewPCG(rand.Uint64(), rand.Uint64())
	}
	t := &Throttle{
		name:         cfg.Name,
		k:            cfg.K,
		maxRejection: cfg.MaxRejection,
		refused:      &pipeline.StopError{Stage: kind.Throttle, Name: cfg.Name, Reason: refusal},
		w:            *newWindow(cfg.Window, cfg.Buckets),
		rng:          rand.New(src),
	}
	t.clock.Clock = cfg.Clock
	t.clock.Start()
	return t, nil
}

// notBuilt is the panic of every use of a Throttle that [New] did not build.
const notBuilt = "throttle: Throttle used without throttle.New (its zero value is not usable)"

// built reports whether New built t: New sets its refusal.
func (t *Throttle) built() bool { return t.refused != nil }

// now reads the throttle's clock: the time since New. It is
// read before mu is taken, so that a Clock is never called under the lock.
func (t *Throttle) now() time.Duration {
	if !t.built() {
		panic(notBuilt)
	}
	return t.clock.Read()
}

// observe clamps a clock reading taken before mu so that the window's time
// never runs backwards: a caller descheduled between its reading and the
// lock arrives with a reading older than one already written. mu must be
// held.
func (t *Throttle) observe(now time.Duration) time.Duration {
	if now < t.last {
		return t.last
	}
	t.last = now
	return now
}

// Stage says what stage t makes (see [Guard]), so that a throttle can stand
// for its stage where the result type is given once.
func (t *Throttle) Stage() pipeline.StageInfo {
	return pipeline.StageInfo{Kind: kind.Throttle, Name: t.name}
}

// Name returns the throttle's name (Config.Name).
func (t *Throttle) Name() string { return t.name }

// Ticket is the admission [Throttle.Admit] gives one attempt. Hand it back to
// [Throttle.Record] exactly once, when the attempt ends, however it ends. The
// zero Ticket (what a refused Admit returns) is no admission; recording it
// does nothing.
type Ticket struct {
	slice int64 // the window's slice at admission, plus 1; 0 for no admission
}

// Admit asks to start one attempt. It draws from Config.Rand against the
// rejection probability of the window as it stands (see
// [Throttle.RejectionProbability]); it draws nothing while that is 0, so a
// throttle that has seen no rejection never refuses.
//
// A refused attempt counts as a request at once, and never as an accept:
// that is what keeps the probability up while the dependency is still
// rejecting. Admit then returns the zero Ticket and a *pipeline.StopError of
// Stage "throttle" and Reason pipeline.DependencyUnavailable (matching
// pipeline.DependencyUnavailable) with no retry-after hint: each attempt
// is refused at random, so no moment is better to come back at than
// another. Every refusal returns the same StopError: treat it as read-only.
//
// An admitted attempt returns a Ticket for [Throttle.Record], which counts
// it, in the slice of the window that was current at its admission. An
// attempt in flight is counted as nothing: counted as a request before it
// is answered, it would look like a rejection, and a throttle would refuse
// the second of two calls made at once to a healthy dependency half the
// time.
func (t *Throttle) Admit() (Ticket, error) {
	tk, ok := t.admit(criticality.Default)
	if !ok {
		return Ticket{}, t.refused
	}
	return tk, nil
}

// admit is Admit without the error, for an attempt of level l: through the
// stage, a Critical attempt is refused with probability p², a Sheddable one
// with √p (at most Config.MaxRejection), and a Default or unmarked one with
// p, the window's rejection probability. So the more an attempt matters,
// the less it is refused, a higher level never more than a lower one, and
// none while p is 0.
func (t *Throttle) admit(l criticality.Level) (Ticket, bool) {
	now := t.now()
	t.mu.Lock()
	t.w.rotate(t.observe(now))
	if p := levelled(t.probability(t.w.total), l, t.maxRejection); p > 0 && t.rng.Float64() < p {
		t.w.add(t.w.head, false)
		t.mu.Unlock()
		return Ticket{}, false
	}
	tk := Ticket{slice: t.w.head + 1}
	t.mu.Unlock()
	return tk, true
}

// Record reports how the attempt tk admitted ended, with its verdict v. In
// order:
//
//   - The zero Ticket (a refusal's) records nothing.
//   - A verdict of our own (v.SelfImposed: an inner stage, such as a
//     breaker, refused the attempt) or the caller's (v.Canceled: the caller
//     canceled, or its deadline passed) records nothing: the dependency was
//     never asked, or its answer was not awaited, so the attempt counts as
//     no request at all, and a caller's cancellations never make the
//     throttle refuse.
//   - An attempt admitted in a slice that has since left the window records
//     nothing: its request is no longer part of the window's history.
//   - OK and Permanent verdicts count a request and an accept: the
//     dependency processed the request, and a Permanent failure (a 400, a
//     validation error) is its answer to a request it served.
//   - Transient and Throttled verdicts count a request that was not
//     accepted: the dependency failed, timed out or refused the work to
//     protect itself (a 503, our timeout, a 429).
func (t *Throttle) Record(tk Ticket, v outcome.Verdict) {
	if tk.slice == 0 || v.SelfImposed || v.Canceled {
		return
	}
	accepted := v.Kind == outcome.OK || v.Kind == outcome.Permanent
	// No clock reading: the window is as recent as the latest Admit rotated
	// it. A slice that has left by now but not yet been rotated out may take
	// the count, which every reader leaves out (window.at reads at now) and
	// the next rotation clears, so the counts read the same as if the clock
	// had been read, at half the clock readings of an admitted attempt.
	t.mu.Lock()
	if k := tk.slice - 1; t.w.holds(k) {
		t.w.add(k, accepted)
	}
	t.mu.Unlock()
}

// RejectionProbability returns the probability with which an attempt asking
// now would be refused: max(0, (requests - K × accepts) / (requests + 1))
// over the counts of the window, at most Config.MaxRejection. It is 0 while
// the requests are no more than K times the accepts, and so whenever no
// rejection is in the window. Reading it changes nothing.
func (t *Throttle) RejectionProbability() float64 {
	return t.probability(t.counts())
}

// Counts returns the window's counts now: the requests (the refused
// attempts, and the admitted ones recorded with a verdict that counts; see
// [Throttle.Record]) and, among them, the accepts. Reading them changes
// nothing.
func (t *Throttle) Counts() (requests, accepts int) {
	c := t.counts()
	return c.requests, c.accepts
}

// counts reads the window's counts as of now, without rotating it.
func (t *Throttle) counts() counts {
	now := t.now()
	t.mu.Lock()
	c := t.w.at(max(now, t.last))
	t.mu.Unlock()
	return c
}

// levelled is the rejection probability of an attempt of level l when the
// window's is p (see admit), at most most.
func levelled(p float64, l criticality.Level, most float64) float64 {
	switch l {
	case criticality.Critical:
		return p * p
	case criticality.Sheddable:
		return min(math.Sqrt(p), most)
	}
	return p
}

// probability is the rule, on the counts c.
func (t *Throttle) probability(c counts) float64 {
	r := float64(c.requests)
	p := (r - t.k*float64(c.accepts)) / (r + 1)
	if p <= 0 {
		return 0
	}
	return min(p, t.maxRejection)
}

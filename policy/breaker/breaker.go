package breaker

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/criticality"
	conf "github.com/resilience-go/pipeline/internal/breakerconf"
	"github.com/resilience-go/pipeline/internal/clock"
	"github.com/resilience-go/pipeline/internal/histogram"
	"github.com/resilience-go/pipeline/internal/kind"
	"github.com/resilience-go/pipeline/outcome"
)

// Breaker is a circuit breaker for one dependency. It is not generic: every
// pipeline that calls the dependency, whatever its result type, should share one
// Breaker through [Guard], and code outside a pipeline can drive the same breaker
// with [Breaker.Admit] and [Breaker.Record].
//
// The zero Breaker is not usable: build one with [New]. Every method of a
// Breaker that New did not build, and [Guard], panics with a message naming
// New, before taking any lock.
//
// A Breaker is safe for concurrent use. Its state is guarded by a single
// sync.Mutex, held only for a few field updates and never while user code runs.
type Breaker struct {
	cfg   settings
	clock clockwork.Clock // nil for real time, read without clockwork; see now
	// elapsed reads clock as the time since New (see now).
	elapsed clock.Elapsed
	name    string
	onEvent func(context.Context, pipeline.Source, pipeline.Event)
	source  pipeline.Source // of the breaker's events: Stage "breaker" and its name
	// refused is the error of the latest refusal, shared by the refusals with
	// the same hint (see sharedRefusal).
	refused atomic.Pointer[pipeline.StopError]
	// openUntil is breaks.until while the breaker is Open, and 0 otherwise: written
	// under mu, read without it by admit, so that a breaker that may
	// (fastRefusals) refuses during its break without taking the lock.
	openUntil atomic.Int64
	// shadow is the mode (see Config.Shadow). It is written only with mu held,
	// so that it never changes in the middle of a decision, and read with mu
	// held by the state machine, and without it by admit's lock-free refusal
	// and by Shadow.
	shadow atomic.Bool
	// closed is state == Closed, and pending says that events wait in the
	// outbox: both written under mu (setState; emit, transition and drain),
	// read without it by admit, which admits a call to a closed breaker
	// with no event to deliver without taking the lock: a closed breaker
	// decides nothing at admission, so the one lock section of a healthy
	// attempt is its record's.
	closed  atomic.Bool
	pending atomic.Bool

	// mu is the breaker's one lock. It guards every field from here to
	// outbox's queue: each part below has one job, and the state machine
	// (record, admitLocked, trip, close and the ramp's and the trickle's
	// helpers) moves between them.
	mu    sync.Mutex
	last  instant // latest clock reading; later readings are clamped to it
	state State   // stored state: an Open breaker whose break elapsed still says Open
	// evidence is what trips a Closed breaker (evidence.go).
	evidence evidence
	// normal is the measured normal latency and its scaled threshold
	// (measure.go).
	normal normal
	// breaks is the schedule of breaks: how many trips in a row, how long the
	// latest break, when it opened and when the breaker last recovered
	// (breaks.go).
	breaks breaks
	// probes is the half-open phase's slots and leads (probes.go).
	probes probes
	// trickle is the probes a break lets through (trickle.go); meaningful
	// while state is Open.
	trickle trickle
	// ramp is the recovery ramp (ramp.go); meaningful while state is
	// Recovering.
	ramp ramp
	// credit is deficit accounting, for the trickle and the ramp: their share
	// per offered attempt, 1 per admission.
	credit float64
	rng    *rand.Rand
	// outbox is the events waiting for delivery, and their delivery
	// (events.go).
	outbox outbox
}

// Ticket is the permission [Breaker.Admit] gives for one attempt. Hand it back to
// [Breaker.Record] or [Breaker.Done] exactly once, when the attempt ends, however
// it ends. The zero Ticket is not an admission; recording it does nothing.
type Ticket struct {
	start instant // the breaker's clock at admission
	// id is 0 for no admission, ordinary for an attempt admitted while Closed, a
	// probe slot id above that, or rampTicket plus the ramp's number for an
	// attempt a recovery ramp admitted.
	id uint64
}

// ordinary is the id of a ticket for an attempt that holds no probe slot. Probe
// slot ids count up from it, so that a Ticket stays two words.
const ordinary = 1

// Probe reports whether t holds a half-open probe slot.
func (t Ticket) Probe() bool { return t.id > ordinary && t.id < rampTicket }

// New returns a closed breaker configured by cfg, or an error naming every
// impossible setting in cfg.
func New(cfg Config) (*Breaker, error) {
	s, err := cfg.settings()
	if err != nil {
		return nil, err
	}
	b := &Breaker{cfg: s, clock: cfg.Clock, name: cfg.Name, onEvent: cfg.OnEvent, source: pipeline.Source{Stage: kind.Breaker, Name: cfg.Name}}
	b.probes.lastID = ordinary
	b.normal.scaledFrom = -1
	b.shadow.Store(cfg.Shadow)
	b.closed.Store(true)
	src := cfg.Rand
	if src == nil {
		src = rand.NewPCG(rand.Uint64(), rand.Uint64())
	}
	b.rng = rand.New(src)
	b.elapsed.Clock = cfg.Clock
	b.elapsed.Start()
	if s.windowed() {
		b.evidence.window = newWindow(0, s.tripWindow, s.buckets)
	}
	if s.slowCalls {
		b.normal.latencies, err = histogram.New(s.slowWindow, conf.BaselineSlices)
		if err != nil { // settings checked the window; this is a bug
			panic("breaker: " + err.Error())
		}
	}
	if s.relative {
		b.evidence.baseline = newWindow(0, s.failWindow, conf.BaselineSlices)
	}
	b.probes.slots = make([]slot, s.probes)
	return b, nil
}

// instant is a reading of the breaker's clock: the time elapsed since its
// epoch (see now). Its methods mirror time.Time's.
type instant time.Duration

func (i instant) Before(j instant) bool       { return i < j }
func (i instant) Sub(j instant) time.Duration { return time.Duration(i - j) }
func (i instant) Add(d time.Duration) instant { return i + instant(d) }

// now reads the breaker's clock as the time since New (on real time, the
// monotonic clock alone: half the cost of time.Now, and the breaker reads
// the clock twice per attempt). The breaker needs no more, since it only
// measures durations and compares instants. A first reading before New's
// moves the epoch back to it, so that a breaker built outside a synctest
// bubble and called inside one runs on the bubble's time (clock.Elapsed).
//
// Every exported method reads the clock before it takes mu, so now is where a
// Breaker that New did not build is caught, before anything is locked.
func (b *Breaker) now() instant {
	if !b.built() {
		panic(notBuilt)
	}
	return instant(b.elapsed.Read())
}

// from is now at r, a reading of the breaker's clock (clock.Read) taken
// by the pipeline (pipeline.Next.Entered), without reading it again.
func (b *Breaker) from(r time.Duration) instant { return instant(b.elapsed.From(r)) }

// notBuilt is the panic of every use of a Breaker that [New] did not build.
const notBuilt = "breaker: Breaker used without breaker.New (its zero value is not usable)"

// built reports whether New built b: New names its events' source.
func (b *Breaker) built() bool { return b.source.Stage != "" }

// at converts an instant to the time it stands for, for events and snapshots.
func (b *Breaker) at(i instant) time.Time { return b.elapsed.Epoch().Add(time.Duration(i)) }

// observe clamps a clock reading so that time never runs backwards under mu. Call
// it with mu held.
func (b *Breaker) observe(now instant) instant {
	if now.Before(b.last) {
		return b.last
	}
	b.last = now
	return now
}

// Admit asks to start one attempt. It returns a Ticket to hand back when the
// attempt ends, or, when the breaker refuses, a *pipeline.StopError with Stage
// "breaker", Reason pipeline.DependencyUnavailable and RetryAfter set to the rest
// of the break being served (0 while half-open with every probe slot busy,
// while isolated, and while Recovering: see [Recovery]). Admission is the only thing that moves an Open breaker whose break
// has elapsed to HalfOpen; that attempt is a probe.
//
// In shadow mode (see [Config.Shadow]) Admit never refuses: an attempt it would
// have refused is admitted with a Ticket whose Shadow method reports true and
// whose outcome the breaker ignores, and its Rejection event is raised all the
// same.
//
// If Config.OnEvent panics while Admit delivers events, the panic reaches the
// caller and the admission is withdrawn: its probe slot, if it took one, is
// free again, and nothing is recorded for it.
func (b *Breaker) Admit() (Ticket, error) {
	t, retryAfter, ok := b.admit(b.now(), nil)
	if !ok {
		return t, b.refusal(retryAfter)
	}
	return t, nil
}

// refusal builds the stop error of a refused attempt.
func (b *Breaker) refusal(retryAfter time.Duration) *pipeline.StopError {
	return &pipeline.StopError{Stage: kind.Breaker, Name: b.name, Reason: pipeline.DependencyUnavailable, RetryAfter: retryAfter}
}

// Name returns the breaker's name (Config.Name).
func (b *Breaker) Name() string { return b.name }

// sharedRefusal is the stage's refusal: the stop error of a refusal with the
// hint retryAfter rounded up to the millisecond, as the hint in a verdict is
// (see outcome.Verdict.RetryAfter). Refusals with the same hint share one
// error, the latest one made, so that an open breaker under load allocates
// nothing per refusal: within a millisecond, every refusal returns the same
// error.
func (b *Breaker) sharedRefusal(retryAfter time.Duration) *pipeline.StopError {
	retryAfter = (retryAfter + time.Millisecond - 1).Truncate(time.Millisecond)
	if e := b.refused.Load(); e != nil && e.RetryAfter == retryAfter {
		return e
	}
	e := b.refusal(retryAfter)
	b.refused.Store(e)
	return e
}

// reject reports a refusal to the hook, if there is one: a breaker nobody
// observes does not pay for building the event. In shadow mode the refusal is
// hypothetical, and the event says so. Call it with mu held.
func (b *Breaker) reject(state State, wait time.Duration, now instant) {
	if b.onEvent != nil {
		b.emit(Rejection{State: state, RetryAfter: wait, At: b.at(now), Shadow: b.shadow.Load()})
	}
}

// fastRefusals reports whether an open breaker may refuse during its break
// without its lock: nothing is told of the refusal (no hook), nothing counts
// it (no trickle), it refuses for real (not in shadow mode, where it admits
// under the lock), and its clock never runs backwards. Real time is read from
// the monotonic clock, which does not; an injected clock may be set back, and
// only the lock clamps its readings to the latest one (observe), so that a
// refusal's hint is never longer than the break left.
func (b *Breaker) fastRefusals() bool {
	return b.clock == nil && b.onEvent == nil && b.cfg.trickleEvery == 0 && !b.shadow.Load()
}

// admit decides an admission at now of a call of ctx (nil for one of level
// Default), whose criticality only the recovery ramp reads (see
// admitRamp): so it is read only while Recovering, with the lock let go
// (ctx.Value may be the caller's code), and a closed breaker's call pays
// nothing for it.
func (b *Breaker) admit(now instant, ctx context.Context) (t Ticket, retryAfter time.Duration, ok bool) {
	if b.closed.Load() && !b.pending.Load() {
		return Ticket{start: now, id: ordinary}, 0, true
	}
	if until := instant(b.openUntil.Load()); now.Before(until) && b.fastRefusals() {
		// Open, no hook to tell of the refusal and no trickle to count it:
		// nothing to change, so no lock to take. An open breaker under load
		// must cost less than a healthy call.
		return Ticket{}, until.Sub(now), false
	}
	b.mu.Lock()
	l := criticality.Default
	if b.state == Recovering && ctx != nil {
		b.mu.Unlock()
		l = criticality.From(ctx)
		b.mu.Lock()
	}
	now = b.observe(now)
	t, ok = Ticket{start: now, id: ordinary}, true
	if b.state != Closed { // Closed is the hot path
		t, retryAfter, ok = b.admitLocked(now, l)
		if !ok && b.shadow.Load() { // refused, and raised its Rejection: admit it anyway
			t, retryAfter, ok = Ticket{start: now, id: shadowTicket}, 0, true
		}
	}
	queued := len(b.outbox.queue) > 0
	b.mu.Unlock()
	if queued {
		b.flushAdmitting(t)
	}
	return t, retryAfter, ok
}

// setState moves the breaker to s. Call it with mu held.
func (b *Breaker) setState(s State) {
	b.state = s
	b.closed.Store(s == Closed)
}

// admitLocked decides an admission in any state but Closed. Call it with mu held.
func (b *Breaker) admitLocked(now instant, l criticality.Level) (Ticket, time.Duration, bool) {
	switch b.state {
	case Open:
		if now.Before(b.breaks.until) {
			if t, ok := b.admitTrickle(now); ok {
				return t, 0, true
			}
			wait := b.breaks.until.Sub(now)
			b.reject(Open, wait, now)
			return Ticket{}, wait, false
		}
		b.setState(HalfOpen)
		b.openUntil.Store(0)
		b.probes.successes, b.probes.slow = 0, 0
		b.transition(Transition{From: Open, To: HalfOpen, Cause: CauseBreakElapsed, At: b.at(now)})
		fallthrough
	case HalfOpen:
		free := b.probes.free(now)
		if free < 0 {
			b.reject(HalfOpen, 0, now)
			return Ticket{}, 0, false
		}
		return b.probes.take(free, now, b.probeLife()), 0, true
	case Recovering:
		return b.admitRamp(now, l)
	case Isolated:
		b.reject(Isolated, 0, now)
		return Ticket{}, 0, false
	}
	return Ticket{start: now, id: ordinary}, 0, true // not reached: Closed is admitted by admit
}

// Record reports how the attempt t admitted ended: its verdict and its duration d.
// Only failures (outcome.Verdict.Failure) and successes (Kind OK) are evidence;
// other verdicts only free a probe slot. Outcomes are ignored while the breaker
// is Open or Isolated (they come from attempts admitted before it opened), while
// HalfOpen from anything but a current probe, and while Recovering from anything
// the current ramp did not admit. An outcome that finds a ramp run out closes
// the breaker first and counts as a closed-state sample. The outcome of an
// attempt admitted only because the breaker was in shadow mode
// ([Ticket.Shadow]) is always ignored, whatever the state and the mode are by
// the time it is recorded.
//
// The outcome is recorded before any event is delivered: if Config.OnEvent
// panics during Record, t has been recorded, and must not be recorded again.
func (b *Breaker) Record(t Ticket, v outcome.Verdict, d time.Duration) {
	b.finish(b.now(), &t, v, d)
}

// Done is Record with the duration measured on the breaker's clock from t's
// admission, sharing the one clock reading with the window's rotation.
func (b *Breaker) Done(t Ticket, v outcome.Verdict) {
	now := b.now()
	b.finish(now, &t, v, now.Sub(t.start))
}

// finish records the outcome of *t and zeroes its id, marking it recorded, before
// it delivers any event: the stage's unwinding path (doneIfUnwinding) then finds
// nothing to record if the hook panics.
func (b *Breaker) finish(now instant, t *Ticket, v outcome.Verdict, d time.Duration) {
	if t.id == 0 || t.id == shadowTicket {
		return // no admission, or one a real breaker would have refused
	}
	b.mu.Lock()
	b.record(b.observe(now), *t, v, d)
	t.id = 0
	queued := len(b.outbox.queue) > 0
	b.mu.Unlock()
	if queued {
		b.flush()
	}
}

// record applies one outcome, by the state the breaker is in. Call it with
// mu held.
func (b *Breaker) record(now instant, t Ticket, v outcome.Verdict, d time.Duration) {
	failure := v.Failure()
	success := v.Kind == outcome.OK && !v.SelfImposed && !v.Canceled
	switch b.state {
	case Open:
		b.recordTrickle(now, t, success, d) // a trickled probe, or a straggler
	case Isolated:
		// a straggler admitted before the breaker was isolated
	case HalfOpen:
		b.recordProbe(now, t, failure, success, d)
	case Recovering:
		if !b.recordRamp(now, t, failure, success, d) {
			b.recordClosed(now, failure, success, d)
		}
	default:
		b.recordClosed(now, failure, success, d)
	}
}

// trip opens the breaker with the next grown, capped and jittered break. Call it
// with mu held.
func (b *Breaker) trip(now instant, cause Cause) {
	from := b.state
	served := b.breaks.open(now, &b.cfg, b.rng)
	b.setState(Open)
	b.trickle = trickle{on: b.cfg.trickleEvery > 0, last: now}
	b.credit = 0
	b.openUntil.Store(int64(b.breaks.until))
	b.clearEvidence()
	b.transition(Transition{From: from, To: Open, Cause: cause, Break: served, At: b.at(now)})
}

// close closes a half-open breaker whose probes succeeded. Call it with mu held.
func (b *Breaker) close(now instant) {
	b.setState(Closed)
	b.breaks.recovered, b.breaks.closedAt = true, now
	b.breaks.trips = 0
	b.clearEvidence()
	b.transition(Transition{From: HalfOpen, To: Closed, Cause: CauseProbesSucceeded, At: b.at(now)})
}

// clearEvidence forgets the trip window, the failure run and the probes. Call it
// with mu held.
func (b *Breaker) clearEvidence() {
	b.evidence.reset()
	b.probes.reset()
}

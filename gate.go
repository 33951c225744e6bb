package pipeline

import (
	"context"
	"sync"

	"github.com/resilience-go/pipeline/internal/nilness"
	"github.com/resilience-go/pipeline/outcome"
)

// Gate is shared state that lets calls in: a semaphore, a bulkhead, a rate
// limiter, a quota, a limiter of your own. [Guard] makes one a stage. A Gate
// is not generic, so that pipelines of different result types can share
// one. Its methods are called by many calls at once and must be safe for
// that; none may hold a lock while it emits an event, since the hook is the
// caller's code. A gate that learns from how its calls end is a [Learner].
type Gate interface {
	Described

	// Admit lets the call of ctx in and returns its permit, or refuses it
	// with a *StopError and takes nothing. It may wait (for a slot, for a
	// token), but must give up when ctx ends, returning the error of
	// [Interrupted] for its stage. The stage returns the error with the
	// verdict [Next.Refuse] gives it. Admit may report, with ev, that the
	// call waited.
	Admit(ctx context.Context, ev Events) (Permit, *StopError)

	// Release gives back p, the permit of the call of ctx. It is called
	// once for every permit that is not Spent: as the call returns (after a
	// Learner's Done); as a panic out of the call unwinds; or, if the
	// pipeline keeps the returned value alive ([Options].WhenReleased),
	// when that value is released, which may be on another goroutine, after
	// Execute has returned and ctx has ended.
	Release(ctx context.Context, p Permit)
}

// Learner is a [Gate] that learns from how the calls it admitted ended, as
// an adaptive limit learns from their latency and their verdicts.
type Learner interface {
	Gate

	// Done tells the gate that the call admitted with p has returned, with
	// v, the verdict of its Result. It is called once for every permit, as
	// the call returns, on the call's goroutine, before Release; it is not
	// called for a call that panicked, which has no verdict. It may report
	// what it learned with ev.
	Done(ctx context.Context, p Permit, v outcome.Verdict, ev Events)
}

// Permit is what a [Gate] gives a call it admits, and is handed back, as it
// was, to the gate's Done and Release.
type Permit struct {
	// Value is the gate's own note on the call: a reading of its clock as
	// the call got in, a ticket's number. Zero if the gate needs none.
	Value int64
	// Spent says that the call used up what it took, as a call uses a rate
	// limiter's token: nothing is to be given back, and the stage calls no
	// Release for it (a Learner's Done is still called). The zero Permit is
	// not spent.
	Spent bool
}

// Events is what a [Gate] emits events with: the hook of the pipeline
// whose call it admits, and the labels of the gate's stage. It does for a
// gate what [Next.Observed] and [Next.Emit] do for a stage, without the
// result type. The zero Events has no hook.
type Events struct {
	hook   func(context.Context, Source, Event)
	source *Source
}

// Observed reports whether the pipeline has an event hook. Check it before
// building an event, so that a pipeline without a hook pays nothing for
// events.
func (e Events) Observed() bool { return e.hook != nil }

// Emit delivers ev to the pipeline's event hook, if there is one, with ctx,
// the context of the call ev concerns, and the [Source] of the gate's
// stage. Never call it while holding a lock.
func (e Events) Emit(ctx context.Context, ev Event) {
	if e.hook != nil {
		e.hook(ctx, *e.source, ev)
	}
}

// events is n's event hook and the labels of the stage n was handed to, for
// a gate.
func (n Next[T]) events() Events {
	if n.p.onEvent == nil {
		return Events{}
	}
	return Events{hook: n.p.onEvent, source: &n.p.sources[n.pos.stage-1]}
}

// GatePolicy is the stage [Guard] makes of a [Gate]. It is immutable and
// safe for concurrent use.
type GatePolicy[T any] struct {
	g Gate
	l Learner // g, if it is one
}

// Guard returns a stage that runs what passes through it with a permit of
// g. See [GatePolicy.Execute] for what the stage does. Guard panics if g is
// nil.
func Guard[T any](g Gate) *GatePolicy[T] {
	if nilness.Of(g) {
		panic("pipeline: Guard: gate is nil")
	}
	l, _ := g.(Learner)
	return &GatePolicy[T]{g: g, l: l}
}

// Stage says what stage p is: what its gate says of itself.
func (p *GatePolicy[T]) Stage() StageInfo { return p.g.Stage() }

// Execute runs the rest of the pipeline with a permit of the gate. In
// order:
//
//   - A ctx already done takes no permit: Execute returns the error of
//     [Interrupted] (Canceled or Deadline) at once, without asking the gate.
//   - The gate refuses (Admit returns a *StopError): Execute returns that
//     error, with the verdict [Next.Refuse] gives it, and emits [Stopped].
//   - Otherwise the rest runs, then a [Learner]'s Done learns its verdict,
//     and Release takes the permit back, unless it is Spent. If the
//     pipeline keeps returned values alive ([Options].WhenReleased, as for
//     an HTTP response whose body is still being read), Release waits until
//     the value is released, and runs once however often it is. A panic
//     out of the rest gives the permit back as it unwinds, without Done,
//     and goes on; so does a panic out of Done.
//
// The stage holds no lock of its own and allocates nothing but, in a
// pipeline that keeps values alive, the function that releases a permit
// that is not Spent.
func (p *GatePolicy[T]) Execute(ctx context.Context, next Next[T]) Result[T] {
	if ctx.Err() != nil {
		return next.Refuse(ctx, Interrupted(ctx, p.g.Stage()))
	}
	ev := next.events()
	permit, stop := p.g.Admit(ctx, ev)
	switch {
	case stop != nil:
		return next.Refuse(ctx, stop)
	case permit.Spent && p.l == nil:
		return next.Run(ctx)
	case permit.Spent:
		r := next.Run(ctx)
		p.l.Done(ctx, permit, r.Verdict, ev)
		return r
	case next.Holds():
		return p.held(ctx, next, permit, ev)
	}
	defer p.g.Release(ctx, permit)
	r := next.Run(ctx)
	if p.l != nil {
		p.l.Done(ctx, permit, r.Verdict, ev)
	}
	return r
}

// held runs the rest with permit for a pipeline that keeps returned values
// alive: the permit goes back when the value is released, or at once if the
// rest panics or returns a value that holds nothing.
func (p *GatePolicy[T]) held(ctx context.Context, next Next[T], permit Permit, ev Events) Result[T] {
	release := sync.OnceFunc(func() { p.g.Release(ctx, permit) })
	held := false
	defer func() {
		if !held { // a panic, out of the rest, Done or WhenReleased
			release()
		}
	}()
	r := next.Run(ctx)
	if p.l != nil {
		p.l.Done(ctx, permit, r.Verdict, ev)
	}
	r = next.Hold(r, release)
	held = true
	return r
}

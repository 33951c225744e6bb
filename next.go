package pipeline

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/resilience-go/pipeline/internal/callctx"
	"github.com/resilience-go/pipeline/internal/clock"
	"github.com/resilience-go/pipeline/outcome"
)

// Result is what running the rest of a pipeline produced: the value and error the
// attempt (or an inner stage) returned, and the attempt's verdict. Stages pass it
// outward, possibly replacing Err with a [StopError]; they never reclassify it.
// A stage that builds a Result with an error and leaves the verdict zero (which
// reads as OK) has it judged by [Next.Run] on the way out: a [*StopError] gets
// the verdict [Next.Refuse] gives, any other error the one the attempt's
// classification would give it, so that no stage outside reads a failure as a
// success. Return refusals with Next.Refuse.
type Result[T any] struct {
	Value   T
	Err     error
	Verdict outcome.Verdict
}

// Next is a stage's handle on everything inside it, and on what the stages of one
// pipeline share. It is a small value: copy it, but do not keep it after the
// stage's Execute returns. A stage may call Run any number of times and from
// several goroutines at once (a hedge does), provided every call has returned
// by the time the stage returns.
type Next[T any] struct {
	p   *Pipeline[T]
	fn  Func[T]
	pos position
	// arg is the grace of AbandonAfter if pos.flags has abandons, or else the
	// reading handed to the stage (handed) or to be handed inward (hands).
	arg time.Duration
}

// position is where a Next stands: the index of the policy Run executes next,
// what arg holds, and the attempt number. It is one word, so that Next stays
// four words and is kept in registers.
type position struct {
	stage   uint16
	flags   uint16
	attempt uint32
}

// The flags of a position.
const (
	handed   uint16 = 1 << iota // arg is the reading the stage outside handed in
	hands                       // arg is a reading Run hands to the stage inside
	abandons                    // arg is the grace of AbandonAfter
)

// maxStages is the most stages a pipeline may have: position counts them in
// 16 bits.
const maxStages = 1<<16 - 1

// Run runs the stages inside the current one and, after them, the caller's Func,
// with ctx. The innermost step classifies the attempt's outcome, once, and emits
// an [AttemptFinished] event. A stage's result with an error and the zero
// verdict is judged before Run returns it (see [Result]).
func (n Next[T]) Run(ctx context.Context) Result[T] {
	f := n.pos.flags
	n.pos.flags = f&abandons | (f&hands)>>1 // a reading to hand becomes one handed, once
	if int(n.pos.stage) < len(n.p.policies) {
		policy := n.p.policies[n.pos.stage]
		n.pos.stage++
		r := policy.Execute(ctx, n)
		if r.Err != nil || r.Verdict.Kind > outcome.Permanent { // one branch on the success path
			r = n.p.settle(ctx, r, int(n.pos.stage-1))
		}
		return r
	}
	if f&abandons != 0 {
		return n.p.runDetached(ctx, n.fn, int(n.pos.attempt), n.arg)
	}
	return n.p.attempt(ctx, n)
}

// Inner describes the stage Run executes next, or is the zero StageInfo if
// Run calls the caller's work.
func (n Next[T]) Inner() StageInfo {
	if int(n.pos.stage) < len(n.p.stages) {
		return n.p.stages[n.pos.stage]
	}
	return StageInfo{}
}

// Attempt is the number of the attempt Run starts: 1 for the first, counting
// every attempt of the logical call. A retry stage advances it with WithAttempt.
func (n Next[T]) Attempt() int { return int(n.pos.attempt) }

// WithAttempt returns a copy of n whose Run starts attempt number a.
func (n Next[T]) WithAttempt(a int) Next[T] {
	n.pos.attempt = uint32(a)
	return n
}

// AbandonAfter returns a copy of n whose innermost step keeps the call from
// waiting on work that ignores its context: it runs the work on a goroutine of its own and,
// once ctx is done, waits at most grace for it. Work that is still running then
// is abandoned: Run returns at once with an error matching [ErrAbandoned],
// ctx.Err() and ctx's cause, and the goroutine ends when the work returns,
// discarding its result. A grace of 0 or less turns that off. The timeout
// stage uses this; stages of the pipeline itself honour their context and are
// never abandoned. A Next that abandons hands no reading inward (see At): the
// stages inside one that may abandon read the clock themselves.
func (n Next[T]) AbandonAfter(grace time.Duration) Next[T] {
	switch {
	case grace > 0:
		n.pos.flags = n.pos.flags&^hands | abandons
		n.arg = grace
	case n.pos.flags&abandons != 0:
		n.pos.flags &^= abandons
		n.arg = 0
	}
	return n
}

// Entered is a reading of the pipeline's clock (as [Next.Elapsed]) taken as
// the stage was entered: the one the stage outside handed in with At, or, if
// it handed none, one taken now. Call it as Execute begins. A stage that times
// something on the pipeline's clock, or on a clock of its own that is the
// pipeline's (see SharesClock), measures from it, so that the stages of one
// call, entered one inside the other without a wait between, share one
// reading of the clock instead of taking one each.
func (n Next[T]) Entered() time.Duration {
	if n.pos.flags&handed != 0 {
		return n.arg
	}
	return n.p.now()
}

// At returns a copy of n whose Run hands the reading t (of Elapsed or Entered)
// to the stage inside, as its Entered. Hand a reading on only when nothing
// waits and no caller's code runs between taking it and calling Run: a stage
// that has waited (for a permit, a backoff, a slot) calls Run without At, and
// the stage inside reads the clock itself. The reading is handed once: the
// stage inside hands it further only if it says so.
func (n Next[T]) At(t time.Duration) Next[T] {
	if n.pos.flags&abandons == 0 {
		n.pos.flags |= hands
		n.arg = t
	}
	return n
}

// Onward returns a copy of n whose Run hands inward the reading the stage
// outside handed in, if it handed one, as At would: for a stage that reads no
// clock itself and runs the rest at once, such as a retry's first attempt.
func (n Next[T]) Onward() Next[T] {
	if n.pos.flags&handed != 0 {
		return n.At(n.arg)
	}
	return n
}

// SharesClock reports whether c, a stage's clock (nil for real time), is the
// pipeline's, so that the stage may time itself by the pipeline's readings
// (Entered) rather than read c.
func (n Next[T]) SharesClock(c clockwork.Clock) bool {
	if c == nil {
		return n.p.realTime
	}
	return c == n.p.clock
}

// Observed reports whether the pipeline has an event hook. Check it before
// building an event, so that a pipeline without a hook pays nothing for events.
func (n Next[T]) Observed() bool { return n.p.onEvent != nil }

// Emit delivers e to the pipeline's event hook, if there is one, with ctx, the
// context of the call or attempt e concerns, and the [Source] of the stage
// that emits it. Never call it while holding a lock: the hook is the caller's
// code.
func (n Next[T]) Emit(ctx context.Context, e Event) {
	if n.p.onEvent != nil {
		n.p.onEvent(ctx, n.Source(), e)
	}
}

// Refuse is what a stage returns when it stops a call before anything inside
// it ran: a refusal of its own (an open breaker, a limit reached) or a wait it
// gave up because ctx ended. It reports err as a [Stopped] event and returns
// err with the verdict that keeps the other stages honest: for a Canceled or
// Deadline stop, a Permanent one marked Canceled (the caller's doing, or the
// call's deadline, never the dependency's); for any other, a self-imposed
// Throttled one carrying err's RetryAfter, which no breaker counts as the
// dependency's failure, no budget pays a retry for, and a retry stage outside
// passes on rather than retry.
func (n Next[T]) Refuse(ctx context.Context, err *StopError) Result[T] {
	if n.p.onEvent != nil {
		n.Emit(ctx, Stopped{Err: err})
	}
	return Result[T]{Err: err, Verdict: err.verdict()}
}

// classified returns the attempt's result r, refused if its classification
// gave it a kind that does not exist (see unknownKind).
func classified[T any](r Result[T]) Result[T] {
	if r.Verdict.Kind > outcome.Permanent {
		from := "the classifier (Options.Classifier, or an integration's, such as pipelinehttp's Config.Classify)"
		if v, ok := outcome.Marked(r.Err); ok && v.Kind == r.Verdict.Kind {
			from = "outcome.Mark"
		}
		return unknownKind(r, from)
	}
	return r
}

// unknownKind refuses r, whose verdict has a kind that does not exist, as
// from gave it: no stage could tell what to do with it (the breaker would
// read it as a success), so the result becomes a Permanent failure (never
// retried, never breaker evidence) whose error says where the kind came from
// and wraps outcome.ErrUnknownKind and r's error.
func unknownKind[T any](r Result[T], from string) Result[T] {
	if r.Err != nil {
		r.Err = fmt.Errorf("pipeline: %s gave %v: %w: %w", from, r.Verdict.Kind, outcome.ErrUnknownKind, r.Err)
	} else {
		r.Err = fmt.Errorf("pipeline: %s gave %v: %w", from, r.Verdict.Kind, outcome.ErrUnknownKind)
	}
	r.Verdict = outcome.Verdict{Kind: outcome.Permanent}
	return r
}

// settle is what Run does to the result r of stage i when it has an error
// or a kind that does not exist: an error with the zero verdict is judged
// (see judge), and a kind that does not exist refused (see unknownKind).
func (p *Pipeline[T]) settle(ctx context.Context, r Result[T], i int) Result[T] {
	if r.Err != nil && r.Verdict == (outcome.Verdict{}) {
		r.Verdict = p.judge(ctx, r)
	}
	if r.Verdict.Kind > outcome.Permanent {
		r = unknownKind(r, p.stageName(i))
	}
	return r
}

// stageName names stage i for an error: "the retry stage", or "a stage of
// its own" for one that does not describe itself.
func (p *Pipeline[T]) stageName(i int) string {
	if kind := p.sources[i].Stage; kind != "" {
		return "the " + kind + " stage"
	}
	return "a stage of its own"
}

// judge gives a verdict to r, the result a stage returned with an error and
// the zero verdict, which reads as OK to every stage outside: a custom stage
// that returned Result{Err: err} and left the verdict out. A *StopError gets
// the verdict Refuse would have given it (the stage stopped the call); any
// other error is classified as an attempt's error is, with the pipeline's
// classifier, which may still call it OK.
func (p *Pipeline[T]) judge(ctx context.Context, r Result[T]) outcome.Verdict {
	if stop, ok := errors.AsType[*StopError](r.Err); ok {
		return stop.verdict()
	}
	return outcome.Classify(ctx, r.Value, r.Err, p.classifier)
}

// Source is the [Source] of the stage n was handed to: the labels its events
// carry.
func (n Next[T]) Source() Source {
	if n.pos.stage == 0 { // not handed to a stage: the pipeline's own
		return n.p.own()
	}
	return n.p.sources[n.pos.stage-1]
}

// Clock is the pipeline's clock, for stages that measure or wait.
func (n Next[T]) Clock() clockwork.Clock { return n.p.clock }

// Elapsed reads the pipeline's clock as the time since an instant fixed for
// the process: the difference of two readings is the time between them. On
// real time it reads the monotonic clock alone, half the cost of
// time.Now; a stage that measures should read this rather than Clock.
func (n Next[T]) Elapsed() time.Duration { return n.p.now() }

// attempt runs n's Func once and classifies its outcome. Observed, it
// reports the attempt's duration, from the reading handed in (Entered).
func (p *Pipeline[T]) attempt(ctx context.Context, n Next[T]) Result[T] {
	if !p.timed() { // the hot path: no clock reads
		v, err := n.fn(ctx)
		r := Result[T]{Value: v, Err: err, Verdict: outcome.Classify(ctx, v, err, p.classifier)}
		if r.Verdict.Kind > outcome.Permanent {
			return classified(r)
		}
		return r
	}
	start := n.Entered()
	v, err := n.fn(ctx)
	return p.result(ctx, v, err, int(n.pos.attempt), start)
}

// result classifies what attempt n, started at start (a reading of now),
// returned, and reports it. The reading that ends it is kept on ctx for
// the stage that lent ctx to a timeout right outside the attempt (see
// callctx.Ctx.Returned): a hedge measures its copy with it.
func (p *Pipeline[T]) result(ctx context.Context, v T, err error, n int, start time.Duration) Result[T] {
	r := classified(Result[T]{Value: v, Err: err, Verdict: outcome.Classify(ctx, v, err, p.classifier)})
	if !p.timed() {
		return r
	}
	end := p.now()
	if c, ok := ctx.(*callctx.Ctx); ok && p.timedInside {
		c.Returned(end)
	}
	e := AttemptFinished{Attempt: n, Verdict: r.Verdict, Duration: end - start, Err: err}
	if p.onAttempt != nil {
		p.onAttempt(ctx, p.own(), e)
	} else {
		p.onEvent(ctx, p.own(), e)
	}
	return r
}

// timed reports whether the pipeline times its attempts: it has a hook
// that receives them.
func (p *Pipeline[T]) timed() bool { return p.onEvent != nil || p.onAttempt != nil }

// now reads the pipeline's clock as the time since clock.Epoch. On real time
// (no Options.Clock) that reads only the monotonic clock: half the cost of
// time.Now, which clockwork's real clock reads for Now and for Since alike.
func (p *Pipeline[T]) now() time.Duration {
	if p.realTime {
		return clock.Read(nil)
	}
	return clock.Read(p.clock)
}

// Discard releases the value of r, a result the stage drops rather than return:
// an attempt it will retry, a copy that lost a race. It calls the pipeline's
// [Options].Release with the value, unless there is no Release hook or the value
// is T's zero value. Call it once per dropped result, never for the result the
// stage returns, and never while holding a lock.
func (n Next[T]) Discard(r Result[T]) { n.p.discard(r.Value) }

// Hold returns r with end tied to the life of its value: end runs when the value
// is released, by the caller or by an outer stage that discards it. A stage that
// derived something for the attempt it returns, such as a context it must
// cancel, passes the cancel function here instead of calling it, so that the
// caller can still read the value (an HTTP response's body) after Execute
// returns. Without an [Options].WhenReleased hook, or for T's zero value, Hold
// calls end at once. end must be safe to call more than once and from any
// goroutine, as a context.CancelFunc is.
func (n Next[T]) Hold(r Result[T], end func()) Result[T] {
	if n.p.whenReleased == nil || isZero(r.Value) {
		end()
		return r
	}
	r.Value = n.p.whenReleased(r.Value, end)
	return r
}

// Holds reports whether the pipeline keeps a returned value's attempt alive
// until the value is released (it has an [Options].WhenReleased hook). Hold
// works either way; a stage that would allocate to build the function it
// passes to Hold can check Holds first and, when it is false, end what it
// derived itself.
func (n Next[T]) Holds() bool { return n.p.whenReleased != nil }

// ErrOf returns the error a stage puts in the [StopError] it builds from r:
// r.Err or, for an attempt that returned a value and a nil error and was judged
// a failure, a [*ValueError] saying what the value was.
func (n Next[T]) ErrOf(r Result[T]) error {
	if r.Err != nil || r.Verdict.Kind == outcome.OK {
		return r.Err
	}
	return &ValueError{Verdict: r.Verdict, Value: n.p.describeValue(r.Value)}
}

// discard releases v if the pipeline has a Release hook and v is not zero.
func (p *Pipeline[T]) discard(v T) {
	if p.release != nil && !isZero(v) {
		p.release(v)
	}
}

// describeValue says what v is, for a ValueError.
func (p *Pipeline[T]) describeValue(v T) string {
	if p.describe != nil {
		return p.describe(v)
	}
	switch d := any(v).(type) {
	case error:
		return d.Error()
	case fmt.Stringer:
		return d.String()
	}
	return fmt.Sprintf("a value of type %T", v)
}

// isZero reports whether v is T's zero value. It is used only by pipelines with
// hooks for values, so a T that holds nothing never pays for it.
func isZero[T any](v T) bool {
	return reflect.ValueOf(&v).Elem().IsZero()
}

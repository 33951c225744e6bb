package pipeline

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/jonboulle/clockwork"

	"github.com/resilience-go/pipeline/internal/kind"
	"github.com/resilience-go/pipeline/internal/nilness"
	"github.com/resilience-go/pipeline/outcome"
)

// Func is one unit of work: one attempt at the call a pipeline protects. It must
// honour ctx, which is the attempt's own context.
type Func[T any] func(ctx context.Context) (T, error)

// Policy is one stage of a pipeline. Execute runs the stage once for the call or
// attempt it is given; it calls next.Run zero or more times to run the stages
// inside it and, at the end of the chain, the caller's Func.
//
// A Policy must be safe for concurrent use: one pipeline runs many calls at once.
// It must not keep next or ctx beyond its own return, and it must not swallow a
// panic that comes out of next.Run.
type Policy[T any] interface {
	Execute(ctx context.Context, next Next[T]) Result[T]
}

// PolicyFunc adapts a plain function to a [Policy].
type PolicyFunc[T any] func(ctx context.Context, next Next[T]) Result[T]

// Execute calls f(ctx, next).
func (f PolicyFunc[T]) Execute(ctx context.Context, next Next[T]) Result[T] { return f(ctx, next) }

// Options are the settings every stage of one pipeline shares. The zero value is
// valid and means: the built-in classification rules, no event hook, real time,
// values that hold nothing.
//
// Release and WhenReleased are for values that hold resources, such as an
// *http.Response whose body must be closed: see docs/values.md. Set both for
// such a T; leave both nil for a T that holds nothing, which then costs nothing.
type Options[T any] struct {
	// Classifier is consulted once per attempt, after the caller's cancellation
	// and errors marked at their source, and before the built-in rules. It can
	// classify returned values as well as errors. Nil means none.
	Classifier outcome.Classifier[T]
	// Name names the pipeline, typically after the dependency it calls
	// ("payments", "api.example.com:443"). It labels the pipeline's events
	// ([Source].Pipeline). Empty means unnamed.
	Name string
	// OnEvent receives every event the pipeline's stages emit, with the
	// context of the call or attempt it concerns (for a trace's span or a
	// log's correlation; it may be done already) and its [Source], on the
	// goroutine that emitted it, never while a stage holds a lock. It may be
	// called concurrently and must be safe for that. Nil means no hook;
	// events are then not even built.
	OnEvent func(context.Context, Source, Event)
	// OnAttempt, if set, receives the end of every attempt, as the
	// [AttemptFinished] OnEvent would receive, in place of OnEvent, and
	// under the same rules: for the one event every call raises, typed, so
	// that delivering it allocates nothing (an event put in an interface is
	// copied to the heap). Telemetry that records every attempt sets it
	// (pipelineotel does). Nil means attempts reach OnEvent.
	OnAttempt func(context.Context, Source, AttemptFinished)
	// Clock measures attempt durations and paces stages that wait, such as a
	// retry's backoff. Nil means real time.
	Clock clockwork.Clock
	// Release frees a value that an attempt produced and the pipeline does not
	// return to its caller: an attempt a retry replaces, the loser of a hedge
	// race, work abandoned by a timeout (Config.Abandon) that returns late. The pipeline
	// calls it exactly once for every such value that is not T's zero value,
	// never for the value Execute returns, and never while a stage holds a lock;
	// for late abandoned work, on the goroutine that ran it. Nil means discarded
	// values are dropped as they are.
	Release func(T)
	// WhenReleased arranges for done to run when v is released, by the caller
	// (for a response, by closing its body) or by Release, and returns the value
	// to hand on (v itself, or a copy that holds the arrangement). Stages use it
	// to keep what they derived for an attempt, such as its context, alive while
	// the caller still reads the value the attempt returned; done cancels it. It
	// is called at most once per stage for a returned, non-zero value, and done
	// is safe to call more than once and from any goroutine. Nil means stages
	// end what they derived as Execute returns.
	WhenReleased func(v T, done func()) T
	// Describe says what a value is, for the [ValueError] of an attempt whose
	// value was judged a failure ("HTTP 503 Service Unavailable"). Nil means the
	// value's Error or String method, or else its type.
	Describe func(T) string
}

// Pipeline runs calls through an ordered list of stages. Build one with [New],
// once, and share it: it is immutable and safe for concurrent use.
type Pipeline[T any] struct {
	policies     []Policy[T]
	stages       []StageInfo // what each policy says of itself
	name         string
	sources      []Source // of each stage's events, then of the pipeline's own
	classifier   outcome.Classifier[T]
	onEvent      func(context.Context, Source, Event)
	onAttempt    func(context.Context, Source, AttemptFinished)
	clock        clockwork.Clock
	realTime     bool // clock is the real one New set, not one from Options
	release      func(T)
	whenReleased func(T, func()) T
	describe     func(T) string
	detached     *sync.Pool // of *detached[T], for work run by Next.AbandonAfter
	timedInside  bool       // the innermost stage is a timeout (see result)
}

// New composes policies into a pipeline, the first one outermost: New(a, b).
// Execute(ctx, fn) runs a, which runs b, which runs fn. With no policies, Execute
// runs fn once.
//
// New panics, naming the position, if a policy is nil: that is a programming
// error, typically a stage whose constructor's error was ignored. It also
// panics if [Check] finds a composition of the Error severity, such as an
// inner timeout that can never fire; call Check first when the stages come
// from settings read at run time.
func New[T any](policies ...Policy[T]) *Pipeline[T] {
	if len(policies) > maxStages {
		panic(fmt.Sprintf("pipeline: New: %d policies, more than the %d a pipeline may have", len(policies), maxStages))
	}
	for i, p := range policies {
		if nilness.Of(p) {
			panic(fmt.Sprintf("pipeline: New: policy %d of %d is nil", i+1, len(policies)))
		}
	}
	stages := describe(policies)
	if err := refuse(check(stages)); err != nil {
		panic("pipeline: New: " + err.Error())
	}
	p := &Pipeline[T]{
		policies: append([]Policy[T](nil), policies...),
		stages:   stages,
		clock:    clockwork.NewRealClock(),
		realTime: true,
		detached: new(sync.Pool),
	}
	p.detached.New = func() any { return newDetached[T](p.detached) }
	p.timedInside = len(stages) > 0 && stages[len(stages)-1].Kind == kind.Timeout
	p.label()
	return p
}

// Within returns a copy of p with the stages outer placed outside p's own,
// the first outermost, and every option of p: for a stage of one's own
// around a pipeline built elsewhere (a preset). It panics as New does: on a
// nil stage, and on a composition [Check] judges an Error.
func (p *Pipeline[T]) Within(outer ...Policy[T]) *Pipeline[T] {
	q := New(append(slices.Clip(outer), p.policies...)...)
	q.name, q.classifier, q.onEvent, q.onAttempt, q.clock, q.realTime = p.name, p.classifier, p.onEvent, p.onAttempt, p.clock, p.realTime
	q.release, q.whenReleased, q.describe = p.release, p.whenReleased, p.describe
	q.label()
	return q
}

// With returns a copy of p that also uses the options set in o: every field of
// o that is set (not nil, not "") replaces p's, and every other keeps what p had, so that
// p.With(a).With(b) has the settings of a and of b (b's where both set one).
// p itself is unchanged. To drop a setting, build the pipeline again with
// [New].
func (p *Pipeline[T]) With(o Options[T]) *Pipeline[T] {
	q := *p
	if o.Name != "" {
		q.name = o.Name
		q.label()
	}
	if o.Classifier != nil {
		q.classifier = o.Classifier
	}
	if o.OnEvent != nil {
		q.onEvent = o.OnEvent
	}
	if o.OnAttempt != nil {
		q.onAttempt = o.OnAttempt
	}
	if o.Clock != nil {
		q.clock, q.realTime = o.Clock, false
	}
	if o.Release != nil {
		q.release = o.Release
	}
	if o.WhenReleased != nil {
		q.whenReleased = o.WhenReleased
	}
	if o.Describe != nil {
		q.describe = o.Describe
	}
	return &q
}

var (
	errNilFunc    = errors.New("pipeline: Execute: fn is nil")
	errNilContext = errors.New("pipeline: Execute: ctx is nil (use context.Background() or context.TODO())")
)

// Execute runs one logical call of fn through the pipeline's stages and returns
// what the outermost stage returned. A nil fn or a nil ctx is refused with an
// error. A panic in fn propagates to the caller after every stage has cleaned
// up. A call whose ctx is done, and that ended with an error the verdict calls
// the caller's doing but that does not match ctx.Err() (the work's own error,
// passed on by a stage that does not stop calls, or by none), returns a
// [*StopError] with Stage "pipeline", Reason Canceled or Deadline, ctx's cause
// and that error: what a canceled caller gets does not depend on the stages.
func (p *Pipeline[T]) Execute(ctx context.Context, fn Func[T]) (T, error) {
	if fn == nil || ctx == nil {
		var zero T
		if fn == nil {
			return zero, errNilFunc
		}
		return zero, errNilContext
	}
	r := Next[T]{p: p, fn: fn, pos: position{attempt: 1}}.Run(ctx)
	if r.Err != nil && r.Verdict.Canceled && ctx.Err() != nil && !errors.Is(r.Err, ctx.Err()) {
		r.Err = p.interrupted(ctx, r.Err)
	}
	return r.Value, r.Err
}

// interrupted is the error of a call the caller canceled, or whose deadline
// passed, and that ended with err, an error that does not say so (the work's
// own, passed on by a stage such as a fallback that does not stop a call):
// a StopError of the pipeline's own with reason Canceled or Deadline, the
// context's cause and err, as a retry stage would have stopped it. What a
// canceled caller gets does not depend on which stages are in the pipeline.
func (p *Pipeline[T]) interrupted(ctx context.Context, err error) error {
	stop := Interrupted(ctx, StageInfo{Kind: sourcePipeline, Name: p.name})
	stop.Err = err
	return stop
}

// Execute runs fn once through policies, the first outermost, with T inferred from
// fn. It builds a pipeline for this one call; a hot path should build one with
// [New] and reuse it.
func Execute[T any](ctx context.Context, fn Func[T], policies ...Policy[T]) (T, error) {
	return New(policies...).Execute(ctx, fn)
}

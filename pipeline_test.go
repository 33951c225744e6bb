package pipeline_test

import (
	"context"
	"errors"
	"testing"
	"time"
	"unsafe"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/pipelinetest"
)

// trace is a stage that records when it is entered and left.
func trace(name string, log *[]string) pipeline.Policy[int] {
	return pipeline.PolicyFunc[int](func(ctx context.Context, next pipeline.Next[int]) pipeline.Result[int] {
		*log = append(*log, name+" in")
		r := next.Run(ctx)
		*log = append(*log, name+" out")
		return r
	})
}

func TestFirstPolicyIsOutermost(t *testing.T) {
	var log []string
	p := pipeline.New(trace("a", &log), trace("b", &log), trace("c", &log))
	v, err := p.Execute(t.Context(), func(context.Context) (int, error) {
		log = append(log, "fn")
		return 1, nil
	})
	require.NoError(t, err)
	assert.Equal(t, 1, v)
	assert.Equal(t, []string{"a in", "b in", "c in", "fn", "c out", "b out", "a out"}, log)
}

func TestNoPoliciesRunsFnOnce(t *testing.T) {
	calls := 0
	v, err := pipeline.New[string]().Execute(t.Context(), func(context.Context) (string, error) {
		calls++
		return "x", nil
	})
	require.NoError(t, err)
	assert.Equal(t, "x", v)
	assert.Equal(t, 1, calls)
}

func TestExecuteInfersT(t *testing.T) {
	var log []string
	v, err := pipeline.Execute(t.Context(), func(context.Context) (int, error) { return 3, nil }, trace("a", &log))
	require.NoError(t, err)
	assert.Equal(t, 3, v)
	assert.Equal(t, []string{"a in", "a out"}, log)
}

type key struct{}

func TestContextFlowsInwardAndStagesCanDeriveIt(t *testing.T) {
	tag := pipeline.PolicyFunc[int](func(ctx context.Context, next pipeline.Next[int]) pipeline.Result[int] {
		return next.Run(context.WithValue(ctx, key{}, ctx.Value(key{}).(string)+"+stage"))
	})
	ctx := context.WithValue(t.Context(), key{}, "caller")
	var seen any
	_, err := pipeline.New(tag).Execute(ctx, func(ctx context.Context) (int, error) {
		seen = ctx.Value(key{})
		return 0, nil
	})
	require.NoError(t, err)
	assert.Equal(t, "caller+stage", seen)
}

func TestEveryStageSeesTheOneVerdict(t *testing.T) {
	calls := 0
	classify := func(v int, err error) (outcome.Verdict, bool) {
		calls++
		if err == nil && v == 503 {
			return outcome.Verdict{Kind: outcome.Transient}, true
		}
		return outcome.Verdict{}, false
	}
	var seen []outcome.Verdict
	spy := pipeline.PolicyFunc[int](func(ctx context.Context, next pipeline.Next[int]) pipeline.Result[int] {
		r := next.Run(ctx)
		seen = append(seen, r.Verdict)
		return r
	})
	p := pipeline.New(spy, spy, spy).With(pipeline.Options[int]{Classifier: classify})
	v, err := p.Execute(t.Context(), func(context.Context) (int, error) { return 503, nil })
	require.NoError(t, err, "a value classified as a failure is still returned as a value")
	assert.Equal(t, 503, v)
	assert.Equal(t, 1, calls, "one attempt, one classification")
	want := outcome.Verdict{Kind: outcome.Transient}
	assert.Equal(t, []outcome.Verdict{want, want, want}, seen)
}

func TestCallersCancellationIsNotTheDependencysFault(t *testing.T) {
	var verdict outcome.Verdict
	spy := pipeline.PolicyFunc[int](func(ctx context.Context, next pipeline.Next[int]) pipeline.Result[int] {
		r := next.Run(ctx)
		verdict = r.Verdict
		return r
	})
	ctx, cancel := context.WithCancel(t.Context())
	_, err := pipeline.New(spy).Execute(ctx, func(ctx context.Context) (int, error) {
		cancel()
		return 0, errors.New("connection reset because the request was canceled")
	})
	require.Error(t, err)
	assert.Equal(t, outcome.Verdict{Kind: outcome.Permanent, Canceled: true}, verdict)
	assert.False(t, verdict.Retryable())
	assert.False(t, verdict.Failure())
}

func TestAttemptNumberAndEvents(t *testing.T) {
	clock := clockwork.NewFakeClock()
	var events []pipeline.Event
	twice := pipeline.PolicyFunc[int](func(ctx context.Context, next pipeline.Next[int]) pipeline.Result[int] {
		next.Run(ctx)
		return next.WithAttempt(2).Run(ctx)
	})
	errDown := errors.New("down")
	p := pipeline.New(twice).With(pipeline.Options[int]{
		OnEvent: func(_ context.Context, _ pipeline.Source, e pipeline.Event) { events = append(events, e) },
		Clock:   clock,
	})
	_, err := p.Execute(t.Context(), func(context.Context) (int, error) {
		clock.Advance(30 * time.Millisecond)
		return 0, errDown
	})
	require.ErrorIs(t, err, errDown)
	transient := outcome.Verdict{Kind: outcome.Transient}
	assert.Equal(t, []pipeline.Event{
		pipeline.AttemptFinished{Attempt: 1, Verdict: transient, Duration: 30 * time.Millisecond, Err: errDown},
		pipeline.AttemptFinished{Attempt: 2, Verdict: transient, Duration: 30 * time.Millisecond, Err: errDown},
	}, events)
}

// TestElapsedReadsThePipelinesClock: a stage measures with Next.Elapsed, on
// the pipeline's clock, fake or real.
func TestElapsedReadsThePipelinesClock(t *testing.T) {
	clock := clockwork.NewFakeClock()
	var took time.Duration
	measure := pipeline.PolicyFunc[int](func(ctx context.Context, next pipeline.Next[int]) pipeline.Result[int] {
		start := next.Elapsed()
		r := next.Run(ctx)
		took = next.Elapsed() - start
		return r
	})
	work := func(context.Context) (int, error) { clock.Advance(42 * time.Millisecond); return 1, nil }
	_, err := pipeline.New(measure).With(pipeline.Options[int]{Clock: clock}).Execute(t.Context(), work)
	require.NoError(t, err)
	assert.Equal(t, 42*time.Millisecond, took)

	_, err = pipeline.New(measure).Execute(t.Context(), work) // real time, monotonic
	require.NoError(t, err)
	assert.GreaterOrEqual(t, took, time.Duration(0))
}

func TestWithLeavesTheOriginalUnchanged(t *testing.T) {
	called := false
	base := pipeline.New[int]()
	_ = base.With(pipeline.Options[int]{OnEvent: func(context.Context, pipeline.Source, pipeline.Event) { called = true }})
	_, err := base.Execute(t.Context(), func(context.Context) (int, error) { return 0, nil })
	require.NoError(t, err)
	assert.False(t, called)
}

func TestNilFnIsRefused(t *testing.T) {
	_, err := pipeline.New[int]().Execute(t.Context(), nil)
	assert.EqualError(t, err, "pipeline: Execute: fn is nil")
}

func TestNilPolicyPanicsNamingIt(t *testing.T) {
	var typedNil *nopPolicy
	var nilFunc pipeline.PolicyFunc[int]
	ok := pipeline.PolicyFunc[int](func(ctx context.Context, next pipeline.Next[int]) pipeline.Result[int] { return next.Run(ctx) })
	assert.PanicsWithValue(t, "pipeline: New: policy 2 of 3 is nil", func() { pipeline.New(ok, nil, ok) })
	assert.PanicsWithValue(t, "pipeline: New: policy 1 of 1 is nil", func() { pipeline.New[int](typedNil) })
	assert.PanicsWithValue(t, "pipeline: New: policy 2 of 2 is nil", func() { pipeline.New(ok, pipeline.Policy[int](nilFunc)) })
}

type nopPolicy struct{}

func (*nopPolicy) Execute(ctx context.Context, next pipeline.Next[int]) pipeline.Result[int] {
	return next.Run(ctx)
}

func TestPanicInFnPropagates(t *testing.T) {
	var log []string
	assert.PanicsWithValue(t, "boom", func() {
		_, _ = pipeline.New(trace("a", &log)).Execute(t.Context(), func(context.Context) (int, error) { panic("boom") })
	})
	assert.Equal(t, []string{"a in"}, log, "the panic unwinds through the stage")
}

func TestPolicyFuncConforms(t *testing.T) {
	pipelinetest.Run(t, func() pipeline.Policy[string] {
		return pipeline.PolicyFunc[string](func(ctx context.Context, next pipeline.Next[string]) pipeline.Result[string] {
			return next.Run(ctx)
		})
	}, "v")
}

// A Result of a pointer-sized value must stay within four words: the compiler
// keeps such a struct in registers, which is most of what makes a stage cost a
// few nanoseconds rather than tens (see docs/performance.md).
func TestResultFitsInRegisters(t *testing.T) {
	assert.LessOrEqual(t, unsafe.Sizeof(pipeline.Result[*int]{}), 4*unsafe.Sizeof(uintptr(0)))
	assert.Equal(t, uintptr(8), unsafe.Sizeof(outcome.Verdict{}))
}

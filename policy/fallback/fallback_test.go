package fallback_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/pipelinetest"
	"github.com/resilience-go/pipeline/policy/fallback"
)

var errDown = errors.New("dependency down")

// The suite's work must see its error come back, so the stage is checked in
// the two forms that let it: choosing only refusals (which the suite never
// produces), and choosing every failure with a Func that fails too, whose
// *fallback.Error wraps the work's error.
func TestConformance(t *testing.T) {
	pipelinetest.Run(t, func() pipeline.Policy[string] {
		p, err := fallback.New(fallback.Config[string]{
			When: func(r pipeline.Result[string]) bool { return errors.Is(r.Err, pipeline.DependencyUnavailable) },
			Func: func(context.Context, pipeline.Result[string]) (string, error) { return "fallback", nil },
		})
		require.NoError(t, err)
		return p
	}, "value")
}

func TestConformanceWhenTheFallbackFails(t *testing.T) {
	pipelinetest.Run(t, func() pipeline.Policy[string] {
		p, err := fallback.New(fallback.Config[string]{
			Func: func(context.Context, pipeline.Result[string]) (string, error) { return "", errors.New("no cache") },
		})
		require.NoError(t, err)
		return p
	}, "value")
}

func TestReplacesAFailure(t *testing.T) {
	var seen pipeline.Result[string]
	p, err := fallback.New(fallback.Config[string]{
		Name: "cache",
		Func: func(_ context.Context, r pipeline.Result[string]) (string, error) {
			seen = r
			return "cached", nil
		},
	})
	require.NoError(t, err)
	ev, rel := &events{}, &released{}
	var verdict outcome.Verdict
	v, err := pipeline.New(spy[string](&verdict), pipeline.Policy[string](p)).
		With(pipeline.Options[string]{OnEvent: ev.add, Release: rel.add}).
		Execute(t.Context(), func(context.Context) (string, error) { return "half a reply", errDown })

	require.NoError(t, err)
	assert.Equal(t, "cached", v)
	assert.Equal(t, outcome.OK, verdict.Kind, "a replaced result is a success for the stages outside")
	assert.Equal(t, "half a reply", seen.Value, "Func sees the value it replaces")
	assert.ErrorIs(t, seen.Err, errDown)
	assert.Equal(t, []string{"half a reply"}, rel.list(), "the replaced value is released")
	assert.Equal(t, []pipeline.Event{
		pipeline.AttemptFinished{Attempt: 1, Verdict: outcome.Verdict{Kind: outcome.Transient}, Err: errDown},
		fallback.Executed{Verdict: outcome.Verdict{Kind: outcome.Transient}, Err: errDown},
	}, zeroDurations(ev.list()), "the original error stays reachable through the event")
}

// zeroDurations clears the durations of AttemptFinished events, which the
// real clock sets.
func zeroDurations(es []pipeline.Event) []pipeline.Event {
	for i, e := range es {
		if a, ok := e.(pipeline.AttemptFinished); ok {
			a.Duration = 0
			es[i] = a
		}
	}
	return es
}

func TestSuccessIsNotReplaced(t *testing.T) {
	called := false
	p, err := fallback.New(fallback.Config[string]{
		Func: func(context.Context, pipeline.Result[string]) (string, error) { called = true; return "", nil },
	})
	require.NoError(t, err)
	v, err := pipeline.New[string](p).Execute(t.Context(), func(context.Context) (string, error) { return "fresh", nil })
	require.NoError(t, err)
	assert.Equal(t, "fresh", v)
	assert.False(t, called)
}

// A value judged a failure comes to Func with a *pipeline.ValueError, never a
// nil error.
func TestValueJudgedAFailure(t *testing.T) {
	var seen error
	p, err := fallback.New(fallback.Config[string]{
		Func: func(_ context.Context, r pipeline.Result[string]) (string, error) { seen = r.Err; return "stale", nil },
	})
	require.NoError(t, err)
	v, err := pipeline.New[string](p).With(pipeline.Options[string]{
		Classifier: func(v string, err error) (outcome.Verdict, bool) {
			return outcome.Verdict{Kind: outcome.Transient}, v == "503"
		},
		Describe: func(v string) string { return v },
	}).Execute(t.Context(), func(context.Context) (string, error) { return "503", nil })
	require.NoError(t, err)
	assert.Equal(t, "stale", v)
	ve, ok := errors.AsType[*pipeline.ValueError](seen)
	require.True(t, ok, "Func got %v", seen)
	assert.Equal(t, "503", ve.Value)
}

// When the fallback fails, nothing is replaced: the original value comes back
// with an error holding both errors, and Func's own value is released.
func TestFailedFallbackKeepsTheOriginal(t *testing.T) {
	errNoCache := errors.New("no cache")
	p, err := fallback.New(fallback.Config[string]{
		Func: func(context.Context, pipeline.Result[string]) (string, error) { return "partial", errNoCache },
	})
	require.NoError(t, err)
	ev, rel := &events{}, &released{}
	var verdict outcome.Verdict
	v, err := pipeline.New(spy[string](&verdict), pipeline.Policy[string](p)).
		With(pipeline.Options[string]{OnEvent: ev.add, Release: rel.add}).
		Execute(t.Context(), func(context.Context) (string, error) { return "last reply", outcome.MarkPermanent(errDown) })

	assert.Equal(t, "last reply", v)
	assert.Equal(t, outcome.Permanent, verdict.Kind, "the original verdict stands")
	assert.ErrorIs(t, err, errDown)
	assert.ErrorIs(t, err, errNoCache)
	fe, ok := errors.AsType[*fallback.Error](err)
	require.True(t, ok)
	assert.ErrorIs(t, fe.Original, errDown)
	assert.Equal(t, "fallback: no cache (replacing: dependency down)", err.Error())
	assert.Equal(t, []string{"partial"}, rel.list(), "Func's value is released, the original is not")
	assert.Contains(t, ev.list(), pipeline.Event(fallback.Executed{
		Verdict: outcome.Verdict{Kind: outcome.Permanent}, Err: outcome.MarkPermanent(errDown), FuncErr: errNoCache,
	}))
}

// The caller's own cancellation is never replaced: nobody is waiting.
func TestCallerCancellationIsNotReplaced(t *testing.T) {
	called := false
	p, err := fallback.New(fallback.Config[string]{
		When: func(pipeline.Result[string]) bool { return true }, // even a When that chooses everything
		Func: func(context.Context, pipeline.Result[string]) (string, error) { called = true; return "x", nil },
	})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	_, err = pipeline.New[string](p).Execute(ctx, func(ctx context.Context) (string, error) {
		cancel()
		return "", ctx.Err()
	})
	assert.ErrorIs(t, err, context.Canceled)
	assert.False(t, called)
}

// A panic in Func goes on to the caller, and the value it was replacing is
// released on the way.
func TestPanicInFuncPropagates(t *testing.T) {
	p, err := fallback.New(fallback.Config[string]{
		Func: func(context.Context, pipeline.Result[string]) (string, error) { panic("no fallback today") },
	})
	require.NoError(t, err)
	rel := &released{}
	pl := pipeline.New[string](p).With(pipeline.Options[string]{Release: rel.add})
	assert.PanicsWithValue(t, "no fallback today", func() {
		_, _ = pl.Execute(t.Context(), func(context.Context) (string, error) { return "orphan", errDown })
	})
	assert.Equal(t, []string{"orphan"}, rel.list())
}

// A panic in When goes on to the caller too, and the value it was judging is
// released on the way, once; it used to be released never (issue #27 item 9).
func TestPanicInWhenReleasesTheValue(t *testing.T) {
	p, err := fallback.New(fallback.Config[string]{
		When: func(pipeline.Result[string]) bool { panic("cannot judge") },
		Func: func(context.Context, pipeline.Result[string]) (string, error) { return "default", nil },
	})
	require.NoError(t, err)
	rel := &released{}
	pl := pipeline.New[string](p).With(pipeline.Options[string]{Release: rel.add})
	assert.PanicsWithValue(t, "cannot judge", func() {
		_, _ = pl.Execute(t.Context(), func(context.Context) (string, error) { return "orphan", nil })
	})
	assert.Equal(t, []string{"orphan"}, rel.list())
}

// When may judge values: here an empty answer is replaced too.
func TestWhenJudgesValues(t *testing.T) {
	p, err := fallback.New(fallback.Config[string]{
		When: func(r pipeline.Result[string]) bool { return fallback.Failed(r) || r.Value == "" },
		Func: func(_ context.Context, r pipeline.Result[string]) (string, error) {
			assert.NoError(t, r.Err, "a success chosen by When has no error")
			return "default", nil
		},
	})
	require.NoError(t, err)
	v, err := pipeline.New[string](p).Execute(t.Context(), func(context.Context) (string, error) { return "", nil })
	require.NoError(t, err)
	assert.Equal(t, "default", v)
}

func TestConfigValidation(t *testing.T) {
	_, err := fallback.New(fallback.Config[string]{Name: "x"})
	assert.EqualError(t, err, "fallback: Config.Func must be set: it computes the replacement, and has no default")
}

func TestFailed(t *testing.T) {
	for _, tc := range []struct {
		r    pipeline.Result[int]
		want bool
	}{
		{pipeline.Result[int]{}, false},
		{pipeline.Result[int]{Err: errDown, Verdict: outcome.Verdict{Kind: outcome.Transient}}, true},
		{pipeline.Result[int]{Err: errDown, Verdict: outcome.Verdict{Kind: outcome.Permanent}}, true},
		{pipeline.Result[int]{Err: errDown, Verdict: outcome.Verdict{Kind: outcome.Throttled, SelfImposed: true}}, true},
		{pipeline.Result[int]{Value: 503, Verdict: outcome.Verdict{Kind: outcome.Transient}}, true},
		{pipeline.Result[int]{Err: context.Canceled, Verdict: outcome.Verdict{Kind: outcome.Permanent, Canceled: true}}, false},
	} {
		assert.Equal(t, tc.want, fallback.Failed(tc.r), "%+v", tc.r)
	}
}

// The success path allocates nothing, with or without an event hook: a
// pipeline with the stage allocates what one without it does (the
// pipeline's own attempt event, when observed).
func TestSuccessAllocatesNothing(t *testing.T) {
	p, err := fallback.New(fallback.Config[int]{
		Func: func(context.Context, pipeline.Result[int]) (int, error) { return 0, nil },
	})
	require.NoError(t, err)
	ctx, work := context.Background(), func(context.Context) (int, error) { return 1, nil }
	hook := pipeline.Options[int]{OnEvent: func(context.Context, pipeline.Source, pipeline.Event) {}}
	allocs := func(pl *pipeline.Pipeline[int]) float64 {
		return testing.AllocsPerRun(100, func() { _, _ = pl.Execute(ctx, work) })
	}
	assert.Zero(t, allocs(pipeline.New[int](p)))
	assert.Equal(t, allocs(pipeline.New[int]().With(hook)), allocs(pipeline.New[int](p).With(hook)))
}

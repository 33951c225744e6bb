package pipelineotel_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/otel"
	"github.com/resilience-go/pipeline/policy/breaker"
	"github.com/resilience-go/pipeline/standard"
)

// matching returns the lines that start with prefix.
func matching(lines []string, prefix string) []string {
	return slices.DeleteFunc(slices.Clone(lines), func(l string) bool { return !strings.HasPrefix(l, prefix) })
}

// TestScopes runs two keys of one Scopes, one whose dependency fails until
// its breaker opens and one that succeeds, and checks that the gauges report
// each key's breaker in its own state, that calls and transitions carry the
// family's name (DefaultFamily here), not the key's, and that Unobserve
// stops the gauges.
func TestScopes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t)
		cfg := scripted()
		cfg.Name = ""
		s, err := pipelineotel.NewScopes(r.tel, standard.ScopesConfig[string, string]{Config: cfg})
		require.NoError(t, err)
		ok := func(ctx context.Context) (string, error) { return "ok", wait(ctx, 5*time.Millisecond) }
		fail := func(ctx context.Context) (string, error) { return "", errBoom }

		_, err = s.Execute(context.Background(), "down", fail) // two failures trip it
		assert.ErrorIs(t, err, pipeline.AttemptsExhausted)
		_, err = s.Execute(context.Background(), "up", ok)
		require.NoError(t, err)

		lines := r.metrics(t)
		assert.Equal(t, []string{
			"resilience.breaker.state{breaker.name=down,breaker.state=open} 1",
			"resilience.breaker.state{breaker.name=up,breaker.state=closed} 1",
		}, matching(lines, "resilience.breaker.state"))
		assert.Equal(t, []string{
			"resilience.breaker.pressure{breaker.name=down} 1",
			"resilience.breaker.pressure{breaker.name=up} 0",
		}, matching(lines, "resilience.breaker.pressure"))
		assert.Equal(t, []string{
			"resilience.budget.tokens{budget.name=down} 29.315", // 30, less the retry, plus 105 ms of refill at 3 a second
			"resilience.budget.tokens{budget.name=up} 30",
		}, matching(lines, "resilience.budget.tokens"))
		assert.Equal(t, []string{
			"resilience.call.duration{outcome=attempts_exhausted,pipeline.name=scopes} count=1 sum=0.1",
			"resilience.call.duration{outcome=ok,pipeline.name=scopes} count=1 sum=0.005",
		}, matching(lines, "resilience.call.duration"))
		assert.Equal(t, []string{
			"resilience.breaker.transitions{breaker.cause=consecutive_failures,breaker.name=scopes,breaker.state=open} 1",
		}, matching(lines, "resilience.breaker.transitions"))

		s.Unobserve()
		s.Unobserve()
		lines = r.metrics(t)
		assert.Empty(t, matching(lines, "resilience.breaker.state"))
		assert.Empty(t, matching(lines, "resilience.budget"))
	})
}

// TestNewStandardKeepsYourHooks checks that a breaker hook in the config
// and a pipeline hook added with With keep receiving events beside the
// telemetry, which keeps recording.
func TestNewStandardKeepsYourHooks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t)
		var mine []string
		hook := func(_ context.Context, src pipeline.Source, e pipeline.Event) {
			mine = append(mine, src.Stage+" "+e.Name())
		}
		cfg := scripted()
		cfg.Breaker.OnEvent = hook
		p, err := pipelineotel.NewStandard[string](r.tel, cfg)
		require.NoError(t, err)
		p = p.With(pipeline.Options[string]{OnEvent: hook})
		fail := func(ctx context.Context) (string, error) { return "", errBoom }
		_, err = p.Execute(context.Background(), fail)
		assert.ErrorIs(t, err, pipeline.AttemptsExhausted)
		assert.Equal(t, []string{
			"pipeline attempt", "retry retry.scheduled", "pipeline attempt",
			"breaker breaker.transition", "retry stopped",
		}, mine)
		assert.Equal(t, []string{
			"resilience.breaker.transitions{breaker.cause=consecutive_failures,breaker.name=svc,breaker.state=open} 1",
		}, matching(r.metrics(t), "resilience.breaker.transitions"))
		assert.Equal(t, []string{
			"resilience.call.duration{outcome=attempts_exhausted,pipeline.name=svc} count=1 sum=0.1",
		}, matching(r.metrics(t), "resilience.call.duration"))
		p.Unobserve()
		assert.Empty(t, matching(r.metrics(t), "resilience.breaker.state"))
	})
}

// TestInstrumentAndObserve checks the pieces for state built elsewhere: a
// preset built by standard.New, a breaker and a budget of their own.
func TestInstrumentAndObserve(t *testing.T) {
	r := newRig(t)
	p, err := standard.New[int](standard.Config{Name: "elsewhere"})
	require.NoError(t, err)
	q := pipelineotel.Instrument(r.tel, p)
	_, err = q.Execute(context.Background(), func(context.Context) (int, error) { return 1, nil })
	require.NoError(t, err)
	brk, err := breaker.New(breaker.Config{Name: "own"})
	require.NoError(t, err)
	stop := r.tel.ObserveBreaker(brk)
	brk.Isolate()
	lines := r.metrics(t)
	assert.Equal(t, []string{
		"resilience.breaker.state{breaker.name=elsewhere,breaker.state=closed} 1",
		"resilience.breaker.state{breaker.name=own,breaker.state=isolated} 1",
	}, matching(lines, "resilience.breaker.state"))
	assert.Len(t, matching(lines, "resilience.call.duration{outcome=ok,pipeline.name=elsewhere} count=1"), 1)
	stop()
	q.Unobserve()
	assert.Empty(t, matching(r.metrics(t), "resilience.breaker.state"))
	assert.NotNil(t, r.tel.ObserveBudget(nil), "a nil budget is unlimited: nothing to observe, and a stop that does nothing")
}

// TestScopesMeasureEveryCall checks that a Scopes built by NewScopes
// measures every key's calls, made through its Execute or through the
// *standard.Pipeline its Get returns, under the family's name (cfg.Name),
// on the pipeline's clock, and that a held key's Get still allocates
// nothing.
func TestScopesMeasureEveryCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t)
		cfg := scripted()
		cfg.Name = "tenants"
		s, err := pipelineotel.NewScopes(r.tel, standard.ScopesConfig[string, string]{Config: cfg})
		require.NoError(t, err)
		ok := func(ctx context.Context) (string, error) { return "ok", wait(ctx, 5*time.Millisecond) }
		fail := func(ctx context.Context) (string, error) { return "", errBoom }
		get := func(key string) *standard.Pipeline[string] {
			p, err := s.Get(key)
			require.NoError(t, err)
			return p
		}

		_, err = s.Execute(context.Background(), "a", ok)
		require.NoError(t, err)
		_, err = get("a").Execute(context.Background(), ok)
		require.NoError(t, err)
		for range 2 {
			_, err = get("b").Execute(context.Background(), ok)
			require.NoError(t, err)
		}
		_, err = get("c").Execute(context.Background(), fail)
		assert.ErrorIs(t, err, pipeline.AttemptsExhausted)

		assert.Equal(t, []string{
			"resilience.call.duration{outcome=attempts_exhausted,pipeline.name=tenants} count=1 sum=0.1",
			"resilience.call.duration{outcome=ok,pipeline.name=tenants} count=4 sum=0.02",
		}, matching(r.metrics(t), "resilience.call.duration"))
		assert.Equal(t, pipeline.StageInfo{Kind: "otel", Name: "calls"}, get("c").Stages()[0], "the Calls stage is outermost")
		assert.Equal(t, "timeout", get("c").Stages()[1].Kind, "before the preset's own stages")
		assert.Zero(t, testing.AllocsPerRun(100, func() { _, _ = s.Get("a") }), "Get of a held key")
	})
}

// TestScopesCallAllocatesAtMostOneMore checks the cost of a call through a
// key's pipeline with telemetry against one without: at most one
// allocation more, the attempt event the pipeline builds for any hook.
func TestScopesCallAllocatesAtMostOneMore(t *testing.T) {
	if testing.Short() {
		t.Skip("measures allocations")
	}
	r := newRig(t)
	bare, err := standard.NewScopes(standard.ScopesConfig[string, int]{})
	require.NoError(t, err)
	instrumented, err := pipelineotel.NewScopes(r.tel, standard.ScopesConfig[string, int]{})
	require.NoError(t, err)
	ctx := context.Background()
	work := func(context.Context) (int, error) { return 1, nil }
	for range 3 { // the key held, in the lock-free copy, its attribute sets built
		_, _ = bare.Execute(ctx, "k", work)
		_, _ = instrumented.Execute(ctx, "k", work)
	}
	without := testing.AllocsPerRun(200, func() { _, _ = bare.Execute(ctx, "k", work) })
	with := testing.AllocsPerRun(200, func() {
		p, _ := instrumented.Get("k")
		_, _ = p.Execute(ctx, work)
	})
	assert.LessOrEqual(t, with-without, 1.0, "allocations: %v without telemetry, %v with", without, with)
}

// TestANilTelemetryIsRefusedNamingIt: NewStandard(nil, ...) used to panic
// with a raw nil dereference (issue #27 item 11).
func TestANilTelemetryIsRefusedNamingIt(t *testing.T) {
	_, err := pipelineotel.NewStandard[string](nil, standard.Config{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "pipelineotel: the *Telemetry is nil: build one with pipelineotel.New")
	p, err := standard.New[string](standard.Config{})
	require.NoError(t, err)
	assert.Panics(t, func() { pipelineotel.Instrument[string](nil, p) })
}

// TestWithKeepsTheAttemptsForBoth checks that a hook of one's own for the
// attempts (OnAttempt) receives them beside the telemetry, which still
// records each.
func TestWithKeepsTheAttemptsForBoth(t *testing.T) {
	r := newRig(t)
	p, err := pipelineotel.NewStandard[int](r.tel, standard.Config{Name: "svc"})
	require.NoError(t, err)
	var mine []int
	p = p.With(pipeline.Options[int]{OnAttempt: func(_ context.Context, _ pipeline.Source, e pipeline.AttemptFinished) {
		mine = append(mine, e.Attempt)
	}})
	for range 2 {
		_, err = p.Execute(context.Background(), func(context.Context) (int, error) { return 1, nil })
		require.NoError(t, err)
	}
	assert.Equal(t, []int{1, 1}, mine)
	assert.Len(t, matching(r.metrics(t), "resilience.attempt.duration{pipeline.name=svc,verdict=ok} count=2"), 1)
}

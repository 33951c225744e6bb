package pipeline_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/policy/breaker"
	"github.com/resilience-go/pipeline/policy/retry"
	"github.com/resilience-go/pipeline/policy/timeout"
)

// heard is what a shared hook heard: each event's kind with its source.
type heard struct {
	mu     sync.Mutex
	events []string
	from   []pipeline.Source
}

func (h *heard) hook(_ context.Context, s pipeline.Source, e pipeline.Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.events = append(h.events, e.Name())
	h.from = append(h.from, s)
}

// named builds timeout -> retry -> breaker, every stage named after dep, in a
// pipeline named dep, with the shared hook on the pipeline and the breaker.
func named(t *testing.T, dep string, h *heard) (*pipeline.Pipeline[int], *breaker.Breaker) {
	t.Helper()
	whole, err := timeout.New[int](timeout.Config{Name: dep, Timeout: time.Minute})
	require.NoError(t, err)
	r, err := retry.New[int](retry.Config{Name: dep, MaxAttempts: 2, RefusalPause: -1, Backoff: retry.Constant{Interval: time.Nanosecond}})
	require.NoError(t, err)
	b, err := breaker.New(breaker.Config{Name: dep, ConsecutiveFailures: 3, OnEvent: h.hook})
	require.NoError(t, err)
	p := pipeline.New(whole, r, breaker.Guard[int](b)).With(pipeline.Options[int]{Name: dep, OnEvent: h.hook})
	return p, b
}

func TestOneHookTellsPipelinesApart(t *testing.T) {
	h := &heard{}
	pa, _ := named(t, "payments", h)
	pb, bb := named(t, "billing", h)
	fail := func(context.Context) (int, error) { return 0, errors.New("down") }

	_, err := pa.Execute(context.Background(), fail) // two attempts, one retry
	stop, ok := errors.AsType[*pipeline.StopError](err)
	require.True(t, ok)
	assert.Equal(t, "retry", stop.Stage)
	assert.Equal(t, "payments", stop.Name)
	assert.Equal(t, `pipeline: payments: retry: attempts exhausted after 2 attempts; last attempt: down`, err.Error())

	bb.Isolate() // a transition: the breaker's own event
	_, err = pb.Execute(context.Background(), fail)
	stop, ok = errors.AsType[*pipeline.StopError](err)
	require.True(t, ok)
	assert.Equal(t, "breaker", stop.Stage, "the refusal passes through the retry as it came")
	assert.Equal(t, "billing", stop.Name)

	attempt := pipeline.Source{Pipeline: "payments", Stage: "pipeline"}
	retried := pipeline.Source{Pipeline: "payments", Stage: "retry", Name: "payments"}
	refused := pipeline.Source{Pipeline: "billing", Stage: "breaker", Name: "billing"}
	passed := pipeline.Source{Pipeline: "billing", Stage: "retry", Name: "billing"}
	breakers := pipeline.Source{Stage: "breaker", Name: "billing"} // a breaker belongs to no one pipeline
	assert.Equal(t, []string{"attempt", "retry.scheduled", "attempt", "stopped",
		"breaker.transition", "breaker.rejection", "stopped", "stopped"}, h.events)
	assert.Equal(t, []pipeline.Source{attempt, retried, attempt, retried,
		breakers, breakers, refused, passed}, h.from)
}

func TestWithNameRelabelsACopy(t *testing.T) {
	h := &heard{}
	p := pipeline.New[int](pipeline.PolicyFunc[int](func(ctx context.Context, next pipeline.Next[int]) pipeline.Result[int] {
		next.Emit(ctx, pipeline.Stopped{})
		return next.Run(ctx)
	})).With(pipeline.Options[int]{OnEvent: h.hook})
	q := p.With(pipeline.Options[int]{Name: "search"})
	ok := func(context.Context) (int, error) { return 1, nil }
	_, _ = p.Execute(context.Background(), ok)
	_, _ = q.Execute(context.Background(), ok)
	assert.Equal(t, []pipeline.Source{
		{}, {Stage: "pipeline"}, // a custom stage that does not describe itself
		{Pipeline: "search"}, {Pipeline: "search", Stage: "pipeline"},
	}, h.from)
	assert.Empty(t, p.Name())
	assert.Equal(t, "search", q.Name())
}

func TestStagesSayWhatTheyAre(t *testing.T) {
	p, _ := named(t, "payments", &heard{})
	assert.Equal(t, []pipeline.StageInfo{
		{Kind: "timeout", Name: "payments", Timeout: time.Minute},
		{Kind: "retry", Name: "payments"},
		{Kind: "breaker", Name: "payments"},
	}, p.Stages())
}

// Names are fixed when the pipeline is built: a named pipeline's call costs
// what an unnamed one's does, events included.
func TestNamesCostNothingPerCall(t *testing.T) {
	h := &heard{events: make([]string, 0, 4096), from: make([]pipeline.Source, 0, 4096)}
	p, _ := named(t, "payments", h)
	unnamed := pipeline.New(stages(t, "TRB")...).With(pipeline.Options[int]{OnEvent: h.hook})
	ok := func(context.Context) (int, error) { return 1, nil }
	calls := func(p *pipeline.Pipeline[int]) float64 {
		return testing.AllocsPerRun(100, func() { _, _ = p.Execute(context.Background(), ok) })
	}
	assert.Equal(t, calls(unnamed), calls(p))
}

type traceKey struct{}

// The hook receives the context of the call or attempt an event concerns,
// where a tracer finds the call's span.
func TestTheHookGetsTheCallsContext(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]any{}
	r, err := retry.New[int](retry.Config{MaxAttempts: 2, Backoff: retry.Constant{Interval: time.Nanosecond}})
	require.NoError(t, err)
	p := pipeline.New[int](r).With(pipeline.Options[int]{OnEvent: func(ctx context.Context, _ pipeline.Source, e pipeline.Event) {
		mu.Lock()
		seen[e.Name()] = ctx.Value(traceKey{})
		mu.Unlock()
	}})
	ctx := context.WithValue(context.Background(), traceKey{}, "span-1")
	_, _ = p.Execute(ctx, func(context.Context) (int, error) { return 0, errors.New("down") })
	assert.Equal(t, map[string]any{"attempt": "span-1", "retry.scheduled": "span-1", "stopped": "span-1"}, seen)
}

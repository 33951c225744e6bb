package throttle_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/pipelinetest"
	"github.com/resilience-go/pipeline/policy/throttle"
)

func TestConformance(t *testing.T) {
	for _, tc := range []struct {
		name string
		draw source
	}{
		// Draws above any probability: the suite's calls are never refused.
		{"admitting", neverRefuse},
		// Draws of 0: once the suite's work has failed, every call is refused.
		{"refusing", alwaysRefuse},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, observed := range []bool{false, true} {
				cfg := pipelinetest.Config[string]{
					NewPolicy: func() pipeline.Policy[string] {
						return throttle.Guard[string](mustNew(t, throttle.Config{Rand: tc.draw}))
					},
					Value: "value",
				}
				if observed {
					cfg.OnEvent = func(*testing.T, pipeline.Event) {}
				}
				pipelinetest.RunWith(t, cfg)
			}
		})
	}
}

// recorder collects the events of the stages, not the pipeline's own
// attempts; the hook may be called from several goroutines.
type recorder struct {
	mu     sync.Mutex
	events []pipeline.Event
}

func (r *recorder) hook(_ context.Context, _ pipeline.Source, e pipeline.Event) {
	if _, attempt := e.(pipeline.AttemptFinished); attempt {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

func (r *recorder) all() []pipeline.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]pipeline.Event(nil), r.events...)
}

// spy returns a stage that records the verdict the stages outside see.
func spy[T any](verdict *outcome.Verdict) pipeline.Policy[T] {
	return pipeline.PolicyFunc[T](func(ctx context.Context, next pipeline.Next[T]) pipeline.Result[T] {
		r := next.Run(ctx)
		*verdict = r.Verdict
		return r
	})
}

var errDown = errors.New("dependency down")

func ok(context.Context) (int, error) { return 1, nil }

// TestAFailingDependencyIsThrottled sends calls through a throttle stage to
// work that always fails: after the first failures, some calls are refused
// without running the work, with the throttle's refusal, and about the share
// the probability says.
func TestAFailingDependencyIsThrottled(t *testing.T) {
	th := mustNew(t, throttle.Config{Name: "search", Clock: clockwork.NewFakeClock(), Rand: rand.NewPCG(8, 9)})
	var verdict outcome.Verdict
	rec := &recorder{}
	p := pipeline.New(spy[int](&verdict), throttle.Guard[int](th)).With(pipeline.Options[int]{OnEvent: rec.hook})
	ran, refused := 0, 0
	var last error
	var refusal outcome.Verdict
	for range 1000 {
		_, err := p.Execute(context.Background(), func(context.Context) (int, error) {
			ran++
			return 0, outcome.MarkTransient(errDown)
		})
		if errors.Is(err, errDown) {
			continue
		}
		refused++
		last, refusal = err, verdict
	}
	assert.Equal(t, 1000, ran+refused)
	assert.InDelta(t, 900, refused, 60, "the probability climbs to the cap, 0.9, within the first calls")

	stop, isStop := errors.AsType[*pipeline.StopError](last)
	require.True(t, isStop, "want a StopError, got %v", last)
	assert.Equal(t, "throttle", stop.Stage)
	assert.Equal(t, "search", stop.Name)
	assert.Equal(t, pipeline.DependencyUnavailable, stop.Reason)
	assert.Zero(t, stop.RetryAfter, "a random refusal has no better moment to come back at")
	assert.ErrorIs(t, last, pipeline.DependencyUnavailable, "matched as a breaker's refusal is")
	assert.Equal(t, outcome.Throttled, refusal.Kind)
	assert.True(t, refusal.SelfImposed, "a refusal of our own is never evidence against the dependency")
	assert.False(t, refusal.Retryable())
	assert.Equal(t, `pipeline: search: throttle: dependency unavailable`, last.Error())
	assert.Contains(t, rec.all(), pipeline.Event(pipeline.Stopped{Err: stop}))
	assert.Len(t, rec.all(), refused, "one Stopped a refusal, and no other event")

	requests, accepts := th.Counts()
	assert.Equal(t, 1000, requests, "every call is a request, refused or not")
	assert.Zero(t, accepts)
	assert.Equal(t, throttle.DefaultMaxRejection, th.RejectionProbability())
}

// TestTheCallersCancellationsNeverThrottle: calls the caller cancels, before
// or during the work, and calls whose own deadline passes count for
// nothing, however many there are.
func TestTheCallersCancellationsNeverThrottle(t *testing.T) {
	th := mustNew(t, throttle.Config{Rand: alwaysRefuse})
	p := pipeline.New(throttle.Guard[int](th))

	before, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := p.Execute(before, ok)
	stop, isStop := errors.AsType[*pipeline.StopError](err)
	require.True(t, isStop)
	assert.Equal(t, pipeline.Canceled, stop.Reason, "a done context is refused as interrupted, and asks nothing")
	assert.Equal(t, "throttle", stop.Stage)

	for range 100 {
		ctx, cancel := context.WithCancel(context.Background())
		_, err := p.Execute(ctx, func(ctx context.Context) (int, error) {
			cancel()
			return 0, ctx.Err()
		})
		assert.ErrorIs(t, err, context.Canceled)
		ctx, cancel = context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
		_, err = p.Execute(ctx, ok)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		cancel()
	}
	requests, accepts := th.Counts()
	assert.Zero(t, requests)
	assert.Zero(t, accepts)
	_, err = p.Execute(context.Background(), ok)
	assert.NoError(t, err, "not refused, even on a draw of 0")
}

func TestAPanicCountsNothingAndGoesOn(t *testing.T) {
	th := mustNew(t, throttle.Config{Rand: alwaysRefuse})
	p := pipeline.New(throttle.Guard[int](th))
	for range 10 {
		assert.PanicsWithValue(t, "boom", func() {
			_, _ = p.Execute(context.Background(), func(context.Context) (int, error) { panic("boom") })
		})
	}
	requests, _ := th.Counts()
	assert.Zero(t, requests)
	_, err := p.Execute(context.Background(), ok)
	assert.NoError(t, err)
}

// TestOneThrottleServesPipelinesOfEveryType: the throttle is not generic; a
// failure through one pipeline raises the probability for another.
func TestOneThrottleServesPipelinesOfEveryType(t *testing.T) {
	th := mustNew(t, throttle.Config{Rand: alwaysRefuse})
	ints := pipeline.New(throttle.Guard[int](th))
	strings := pipeline.New(throttle.Guard[string](th))
	_, err := ints.Execute(context.Background(), func(context.Context) (int, error) { return 0, errDown })
	require.ErrorIs(t, err, errDown)
	_, err = strings.Execute(context.Background(), func(context.Context) (string, error) { return "", nil })
	assert.ErrorIs(t, err, pipeline.DependencyUnavailable)
}

func TestTheSuccessPathAllocatesNothing(t *testing.T) {
	th := mustNew(t, throttle.Config{})
	p := pipeline.New(throttle.Guard[int](th))
	ctx := context.Background()
	_, _ = p.Execute(ctx, ok)
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _, _ = p.Execute(ctx, ok) }))
	assert.Zero(t, testing.AllocsPerRun(1000, func() {
		tk, _ := th.Admit()
		th.Record(tk, outcome.Verdict{})
	}))
}

func TestARefusalAllocatesNothing(t *testing.T) {
	th := mustNew(t, throttle.Config{Rand: alwaysRefuse})
	p := pipeline.New(throttle.Guard[int](th))
	ctx := context.Background()
	_, _ = p.Execute(ctx, func(context.Context) (int, error) { return 0, errDown })
	_, err := p.Execute(ctx, ok)
	require.ErrorIs(t, err, pipeline.DependencyUnavailable)
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _, _ = p.Execute(ctx, ok) }))
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _, _ = th.Admit() }))
}

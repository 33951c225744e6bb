package adaptive_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/latency"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/pipelinetest"
	"github.com/resilience-go/pipeline/policy/adaptive"
)

func mustNew(t testing.TB, cfg adaptive.Config) *adaptive.Limiter {
	t.Helper()
	l, err := adaptive.New(cfg)
	require.NoError(t, err)
	return l
}

func TestConformance(t *testing.T) {
	for _, observed := range []bool{false, true} {
		cfg := pipelinetest.Config[string]{
			NewPolicy: func() pipeline.Policy[string] {
				// A small limit with a queue long enough for the suite's 64
				// calls at once, revised every millisecond.
				return adaptive.Guard[string](mustNew(t, adaptive.Config{InitialLimit: 4, MaxQueue: 64, MaxWait: time.Hour, Interval: time.Millisecond, MinSamples: 1}))
			},
			Value: "value",
		}
		if observed {
			cfg.OnEvent = func(*testing.T, pipeline.Event) {}
		}
		pipelinetest.RunWith(t, cfg)
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

func TestARefusalCarriesTheMedianLatencyAsItsHint(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		est, err := latency.New(latency.Config{})
		require.NoError(t, err)
		l := mustNew(t, adaptive.Config{Name: "search", Estimator: est, InitialLimit: 2, MinLimit: 2, MaxLimit: 2})
		rec := &recorder{}
		p := pipeline.New(adaptive.Guard[int](l)).With(pipeline.Options[int]{OnEvent: rec.hook})
		work := func(context.Context) (int, error) { time.Sleep(40 * time.Millisecond); return 1, nil }
		for range 12 { // a second of calls, two at a time
			var wg sync.WaitGroup
			for range 2 {
				wg.Go(func() { _, _ = p.Execute(t.Context(), work) })
			}
			wg.Wait()
			time.Sleep(50 * time.Millisecond)
		}
		// Two calls inside, a third refused.
		release := make(chan struct{})
		var wg sync.WaitGroup
		for range 2 {
			wg.Go(func() { _, _ = p.Execute(t.Context(), func(context.Context) (int, error) { <-release; return 1, nil }) })
		}
		synctest.Wait()
		var verdict outcome.Verdict
		spy := pipeline.PolicyFunc[int](func(ctx context.Context, next pipeline.Next[int]) pipeline.Result[int] {
			r := next.Run(ctx)
			verdict = r.Verdict
			return r
		})
		_, err = pipeline.New(spy, adaptive.Guard[int](l)).Execute(t.Context(), func(context.Context) (int, error) { return 1, nil })
		close(release)
		wg.Wait()
		stop, isStop := errors.AsType[*pipeline.StopError](err)
		require.True(t, isStop, "want a StopError, got %v", err)
		assert.Equal(t, "adaptive", stop.Stage)
		assert.Equal(t, "search", stop.Name)
		assert.InEpsilon(t, 40*time.Millisecond, stop.RetryAfter, 0.05, "the median latency: when a slot typically frees")
		assert.Equal(t, outcome.Throttled, verdict.Kind)
		assert.True(t, verdict.SelfImposed)
		assert.Equal(t, stop.RetryAfter, verdict.RetryAfter())
		assert.Equal(t, 12*2+2, func() int { _, n := est.Quantile(est.Now(), 0.5); return n }(), "every success was recorded into the shared estimator")
	})
}

func TestRevisionsAndWaitsAreEvents(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := mustNew(t, adaptive.Config{InitialLimit: 2, MaxQueue: 4, MaxWait: time.Second})
		rec := &recorder{}
		p := pipeline.New(adaptive.Guard[int](l)).With(pipeline.Options[int]{OnEvent: rec.hook})
		work := func(context.Context) (int, error) { time.Sleep(20 * time.Millisecond); return 1, nil }
		var wg sync.WaitGroup
		for range 3 { // the third waits for a slot
			wg.Go(func() { _, _ = p.Execute(t.Context(), work) })
		}
		wg.Wait()
		assert.Contains(t, rec.all(), pipeline.Event(pipeline.Waited{Wait: 20 * time.Millisecond, Queued: 0, Limit: 2}))
		for range 60 { // two seconds of calls that use the whole limit
			wg.Add(2)
			for range 2 {
				go func() { defer wg.Done(); _, _ = p.Execute(t.Context(), work) }()
			}
			wg.Wait()
			time.Sleep(15 * time.Millisecond)
		}
		var revisions []adaptive.Revision
		for _, e := range rec.all() {
			if r, ok := e.(adaptive.Revision); ok {
				revisions = append(revisions, r)
			}
		}
		require.NotEmpty(t, revisions)
		assert.Equal(t, adaptive.Grew, revisions[0].Why)
		assert.Equal(t, 2, revisions[0].From)
		assert.Equal(t, 3, revisions[0].To, "2 + sqrt(2)")
		assert.Equal(t, l.Limit(), revisions[len(revisions)-1].To)
	})
}

func TestAPanicGivesTheSlotBackAndTeachesNothing(t *testing.T) {
	l := mustNew(t, adaptive.Config{InitialLimit: 1, MinLimit: 1})
	p := pipeline.New(adaptive.Guard[int](l))
	assert.Panics(t, func() {
		_, _ = p.Execute(context.Background(), func(context.Context) (int, error) { panic("boom") })
	})
	assert.Equal(t, 0, l.InFlight())
	_, n := l.Estimator().Quantile(l.Estimator().Now(), 0.5)
	assert.Zero(t, n)
	_, err := p.Execute(context.Background(), func(context.Context) (int, error) { return 1, nil })
	assert.NoError(t, err)
}

func TestARefusedTicketGivenBackDoesNothing(t *testing.T) {
	clock := clockwork.NewFakeClock()
	l := mustNew(t, adaptive.Config{InitialLimit: 1, MinLimit: 1, Clock: clock})
	held, ok := l.TryAcquire(context.Background())
	require.True(t, ok)
	refused, ok := l.TryAcquire(context.Background())
	require.False(t, ok)
	clock.Advance(time.Minute)

	l.Done(refused, outcome.Verdict{}) // the ok ignored: a caller's mistake
	assert.Equal(t, 1, l.InFlight(), "the slot held is still held")
	_, n := l.Estimator().Quantile(l.Estimator().Now(), 0.5)
	assert.Zero(t, n, "no latency learned from a call that never ran")
	_, ok = l.TryAcquire(context.Background())
	assert.False(t, ok, "no slot was freed")

	l.Done(held, outcome.Verdict{})
	assert.Zero(t, l.InFlight())
}

func TestACanceledQueuedCallIsInterrupted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := mustNew(t, adaptive.Config{InitialLimit: 1, MinLimit: 1, MaxQueue: 1, MaxWait: time.Hour})
		p := pipeline.New(adaptive.Guard[int](l))
		release := make(chan struct{})
		go func() { _, _ = p.Execute(t.Context(), func(context.Context) (int, error) { <-release; return 1, nil }) }()
		synctest.Wait()
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		_, err := p.Execute(ctx, func(context.Context) (int, error) { return 1, nil })
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		stop, isStop := errors.AsType[*pipeline.StopError](err)
		require.True(t, isStop)
		assert.Equal(t, "adaptive", stop.Stage)
		assert.Equal(t, pipeline.Deadline, stop.Reason)
		close(release)
	})
}

func TestTheSuccessPathAllocatesNothing(t *testing.T) {
	l := mustNew(t, adaptive.Config{})
	p := pipeline.New(adaptive.Guard[int](l))
	ctx := context.Background()
	ok := func(context.Context) (int, error) { return 1, nil }
	_, _ = p.Execute(ctx, ok)
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _, _ = p.Execute(ctx, ok) }))
}

package ratelimit_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/pipelinetest"
	"github.com/resilience-go/pipeline/policy/ratelimit"
)

func TestConformance(t *testing.T) {
	t.Run("refusing", func(t *testing.T) {
		// Enough tokens that the suite's calls are never refused: the suite
		// checks the contract, not the refusals.
		pipelinetest.Run(t, func() pipeline.Policy[string] {
			return ratelimit.Guard[string](mustNew(t, ratelimit.Config{Rate: 1e6, Burst: 1000}))
		}, "value")
	})
	t.Run("waiting", func(t *testing.T) {
		// One token at a time: most of the suite's calls wait for theirs.
		pipelinetest.Run(t, func() pipeline.Policy[string] {
			return ratelimit.Guard[string](mustNew(t, ratelimit.Config{Rate: 1000, Burst: 1, MaxWait: time.Hour}))
		}, "value")
	})
}

func mustNew(t testing.TB, cfg ratelimit.Config) *ratelimit.Limiter {
	t.Helper()
	l, err := ratelimit.New(cfg)
	require.NoError(t, err)
	return l
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

func ok(context.Context) (int, error) { return 1, nil }

func TestRefusalIsSelfImposedWithTheTimeUntilATokenAsItsHint(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := mustNew(t, ratelimit.Config{Name: "partner", Rate: 4, Burst: 1})
		var verdict outcome.Verdict
		rec := &recorder{}
		p := pipeline.New(spy[int](&verdict), ratelimit.Guard[int](l)).With(pipeline.Options[int]{OnEvent: rec.hook})

		_, err := p.Execute(t.Context(), ok)
		require.NoError(t, err)
		time.Sleep(100 * time.Millisecond)
		ran := false
		_, err = p.Execute(t.Context(), func(context.Context) (int, error) { ran = true; return 1, nil })

		assert.False(t, ran, "a refused call does not run")
		stop, isStop := errors.AsType[*pipeline.StopError](err)
		require.True(t, isStop, "want a StopError, got %v", err)
		assert.Equal(t, "ratelimit", stop.Stage)
		assert.Equal(t, "partner", stop.Name)
		assert.Equal(t, 150*time.Millisecond, stop.RetryAfter, "the next token is 250 ms after the first, 150 ms from now")
		assert.Equal(t, outcome.Throttled, verdict.Kind)
		assert.True(t, verdict.SelfImposed, "a refusal of our own is never evidence against the dependency")
		assert.False(t, verdict.Retryable())
		assert.Equal(t, 150*time.Millisecond, verdict.RetryAfter())
		assert.Contains(t, rec.all(), pipeline.Event(pipeline.Stopped{Err: stop}))
		assert.Equal(t, `pipeline: partner: ratelimit: rate limited (retry after 150ms)`, err.Error())
	})
}

func TestACallWaitsForItsTokenUpToMaxWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := mustNew(t, ratelimit.Config{Rate: 10, Burst: 1, MaxWait: 250 * time.Millisecond})
		rec := &recorder{}
		p := pipeline.New(ratelimit.Guard[int](l)).With(pipeline.Options[int]{OnEvent: rec.hook})
		start := time.Now()
		var ends []time.Duration
		for range 3 {
			_, err := p.Execute(t.Context(), ok)
			require.NoError(t, err)
			ends = append(ends, time.Since(start))
		}
		assert.Equal(t, []time.Duration{0, 100 * time.Millisecond, 200 * time.Millisecond}, ends,
			"each call waits exactly until its token")
		assert.Equal(t, []pipeline.Event{pipeline.Waited{Wait: 100 * time.Millisecond}, pipeline.Waited{Wait: 100 * time.Millisecond}}, rec.all())

		// Three calls at once: the first waits 100 ms, the second 200 ms,
		// the third would wait 300 ms, beyond MaxWait, and is refused at once.
		var wg sync.WaitGroup
		results := make([]time.Duration, 3)
		errs := make([]error, 3)
		start = time.Now()
		for i := range 3 {
			wg.Go(func() {
				_, errs[i] = p.Execute(t.Context(), ok)
				results[i] = time.Since(start)
			})
			synctest.Wait() // in order
		}
		wg.Wait()
		assert.NoError(t, errs[0])
		assert.NoError(t, errs[1])
		assert.Equal(t, []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 0}, results)
		stop, isStop := errors.AsType[*pipeline.StopError](errs[2])
		require.True(t, isStop)
		assert.Equal(t, 300*time.Millisecond, stop.RetryAfter)
	})
}

func TestACallNeverWaitsPastItsDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := mustNew(t, ratelimit.Config{Rate: 1, Burst: 1, MaxWait: time.Minute})
		p := pipeline.New(ratelimit.Guard[int](l))
		_, err := p.Execute(t.Context(), ok)
		require.NoError(t, err)

		ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err = p.Execute(ctx, ok)
		assert.Zero(t, time.Since(start), "a token that comes after the deadline is not waited for")
		stop, isStop := errors.AsType[*pipeline.StopError](err)
		require.True(t, isStop, "want a refusal, got %v", err)
		assert.Equal(t, "ratelimit", stop.Stage)
		assert.Equal(t, time.Second, stop.RetryAfter)
		assert.NoError(t, ctx.Err())

		time.Sleep(time.Second)
		_, err = p.Execute(t.Context(), ok)
		assert.NoError(t, err, "the refusal took no token")
	})
}

func TestAGivenUpWaitGivesItsTokenBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := mustNew(t, ratelimit.Config{Rate: 1, Burst: 1, MaxWait: time.Minute})
		rec := &recorder{}
		p := pipeline.New(ratelimit.Guard[int](l)).With(pipeline.Options[int]{OnEvent: rec.hook})
		_, err := p.Execute(t.Context(), ok)
		require.NoError(t, err)

		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error)
		go func() {
			_, err := p.Execute(ctx, ok)
			done <- err
		}()
		time.Sleep(400 * time.Millisecond)
		cancel()
		err = <-done
		assert.ErrorIs(t, err, context.Canceled)
		stop, isStop := errors.AsType[*pipeline.StopError](err)
		require.True(t, isStop)
		assert.Equal(t, pipeline.Canceled, stop.Reason)
		assert.Equal(t, "ratelimit", stop.Stage)

		start := time.Now()
		_, err = p.Execute(t.Context(), ok)
		require.NoError(t, err)
		assert.Equal(t, 600*time.Millisecond, time.Since(start), "the next call waits only for the token given back")
	})
}

func TestACanceledCallTakesNoToken(t *testing.T) {
	l := mustNew(t, ratelimit.Config{Rate: 1, Burst: 1})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := pipeline.New(ratelimit.Guard[int](l)).Execute(ctx, ok)
	assert.ErrorIs(t, err, context.Canceled)
	_, allowed := l.Allow()
	assert.True(t, allowed)
}

func TestTheSuccessPathAllocatesNothing(t *testing.T) {
	l := mustNew(t, ratelimit.Config{Rate: 1e9, Burst: 1 << 20})
	p := pipeline.New(ratelimit.Guard[int](l))
	ctx := context.Background()
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _, _ = p.Execute(ctx, ok) }))
}

func TestARefusalAllocatesNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := mustNew(t, ratelimit.Config{Rate: 1, Burst: 1})
		p := pipeline.New(ratelimit.Guard[int](l))
		ctx := t.Context()
		_, _ = p.Execute(ctx, ok)
		_, _ = p.Execute(ctx, ok) // the refusal of this millisecond's hint
		assert.Zero(t, testing.AllocsPerRun(1000, func() { _, _ = p.Execute(ctx, ok) }),
			"refusals with one hint share one error (virtual time stands still here)")
	})
}

package pipeline_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/internal/hedgerule"
	"github.com/resilience-go/pipeline/latency"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/hedge"
	"github.com/resilience-go/pipeline/policy/retry"
	"github.com/resilience-go/pipeline/policy/timeout"
)

// resource is a value that holds something, as an HTTP response holds its
// body: the context of the attempt that made it, which must stay alive while
// the caller reads it, and a count of its releases.
type resource struct {
	id       int
	ctx      context.Context
	failed   bool
	released atomic.Int32
	mu       sync.Mutex
	dones    []func()
}

// Close releases r, as closing a response's body does, running what the stages
// tied to it.
func (r *resource) Close() {
	r.released.Add(1)
	r.mu.Lock()
	dones := r.dones
	r.mu.Unlock()
	for _, done := range dones {
		done()
	}
}

// resources is the options of a pipeline of *resource values, and a record of
// every value its work made.
type resources struct {
	mu   sync.Mutex
	made []*resource
}

func (rs *resources) options() pipeline.Options[*resource] {
	return pipeline.Options[*resource]{
		Classifier: func(r *resource, err error) (outcome.Verdict, bool) {
			if err == nil && r.failed {
				return outcome.Verdict{Kind: outcome.Transient}, true
			}
			return outcome.Verdict{}, false
		},
		Release: (*resource).Close,
		WhenReleased: func(r *resource, done func()) *resource {
			r.mu.Lock()
			r.dones = append(r.dones, done)
			r.mu.Unlock()
			return r
		},
		Describe: func(r *resource) string { return "resource " + string(rune('0'+r.id)) },
	}
}

// make is the work's side: a new value for an attempt that ran with ctx.
func (rs *resources) make(ctx context.Context, failed bool) *resource {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	r := &resource{id: len(rs.made), ctx: ctx, failed: failed}
	rs.made = append(rs.made, r)
	return r
}

// releases returns how many times each value was released, in order made.
func (rs *resources) releases() []int32 {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	out := make([]int32, len(rs.made))
	for i, r := range rs.made {
		out[i] = r.released.Load()
	}
	return out
}

// must returns s, or panics with err: for stages whose configuration is the
// test's own.
func must[S any](s S, err error) S {
	if err != nil {
		panic(err)
	}
	return s
}

// card builds timeout -> retry -> hedge (armed, due after 10 ms) for *resource.
func card(t *testing.T, cooperative bool) *pipeline.Pipeline[*resource] {
	t.Helper()
	est := must(latency.New(latency.Config{}))
	for range hedgerule.DefaultMinSamples {
		est.Record(est.Now(), time.Millisecond)
	}
	return pipeline.New(
		pipeline.Policy[*resource](must(timeout.New[*resource](timeout.Config{Timeout: time.Second, Abandon: !cooperative}))),
		must(retry.New[*resource](retry.Config{Backoff: retry.Constant{Interval: time.Millisecond}})),
		must(hedge.New[*resource](hedge.Config{Estimator: est, Repeatable: true})),
	)
}

func TestTheReturnedValueKeepsItsAttemptAlive(t *testing.T) {
	for _, cooperative := range []bool{true, false} {
		synctest.Test(t, func(t *testing.T) {
			var rs resources
			p := card(t, cooperative).With(rs.options())
			var calls atomic.Int32
			r, err := p.Execute(t.Context(), func(ctx context.Context) (*resource, error) {
				if calls.Add(1) == 2 { // the first hedge: slow, then overtaken
					<-ctx.Done()
					return rs.make(ctx, false), ctx.Err()
				}
				if calls.Load() == 1 { // the first copy answers after the hedge is sent
					time.Sleep(20 * time.Millisecond)
				}
				return rs.make(ctx, false), nil
			})
			require.NoError(t, err)
			assert.NoError(t, r.ctx.Err(), "the returned value's context is alive after Execute")
			r.Close()
			assert.ErrorIs(t, r.ctx.Err(), context.Canceled, "releasing the value ends its attempt")
			assert.Equal(t, []int32{1, 1}, rs.releases(), "the loser was released by the pipeline, the winner by the caller, once each")
		})
	}
}

func TestWithoutWhenReleasedTheAttemptEndsWithTheCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var rs resources
		p := card(t, true)
		r, err := p.Execute(t.Context(), func(ctx context.Context) (*resource, error) {
			return rs.make(ctx, false), nil
		})
		require.NoError(t, err)
		assert.ErrorIs(t, r.ctx.Err(), context.Canceled, "a T that holds nothing pays nothing and keeps nothing alive")
	})
}

func TestEveryDiscardedValueIsReleasedOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var rs resources
		p := card(t, true).With(rs.options())
		var calls atomic.Int32
		var releasedBefore [][]int32
		r, err := p.Execute(t.Context(), func(ctx context.Context) (*resource, error) {
			releasedBefore = append(releasedBefore, rs.releases())
			if calls.Add(1) <= 2 {
				return rs.make(ctx, true), nil // a 503, say: retried
			}
			return rs.make(ctx, false), nil
		})
		require.NoError(t, err)
		assert.Equal(t, 2, r.id)
		assert.Equal(t, []int32{1, 1, 0}, rs.releases(), "each retried value once, the returned one never")
		assert.Equal(t, [][]int32{{}, {1}, {1, 1}}, releasedBefore, "a replaced value is released before the retry runs")
		r.Close()
	})
}

func TestTheLastFailedValueIsReturnedNotReleased(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var rs resources
		p := card(t, true).With(rs.options())
		r, err := p.Execute(t.Context(), func(ctx context.Context) (*resource, error) {
			return rs.make(ctx, true), nil
		})
		require.Error(t, err)
		assert.Equal(t, 2, r.id, "the last attempt's value stays with the caller")
		assert.NoError(t, r.ctx.Err(), "and is still readable")
		assert.Equal(t, []int32{1, 1, 0}, rs.releases())
		ve, ok := errors.AsType[*pipeline.ValueError](err)
		require.True(t, ok, "the stop says what was judged: %v", err)
		assert.Equal(t, "resource 2", ve.Value)
		assert.Contains(t, err.Error(), "attempt returned resource 2, judged transient")
		r.Close()
	})
}

func TestLateAbandonedWorkIsReleased(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var rs resources
		p := pipeline.New(
			pipeline.Policy[*resource](must(timeout.New[*resource](timeout.Config{Timeout: 10 * time.Millisecond, Abandon: true, Grace: 5 * time.Millisecond}))),
		).With(rs.options())
		_, err := p.Execute(t.Context(), func(ctx context.Context) (*resource, error) {
			time.Sleep(time.Second) // work that ignores its context
			return rs.make(ctx, false), nil
		})
		require.ErrorIs(t, err, pipeline.ErrAbandoned)
		time.Sleep(time.Second) // virtual: the abandoned work returns
		synctest.Wait()
		assert.Equal(t, []int32{1}, rs.releases(), "nobody reads a late value: the pipeline releases it")
	})
}

func TestWithMergesOptions(t *testing.T) {
	var events []string
	classified := false
	p := pipeline.New[int]().
		With(pipeline.Options[int]{OnEvent: func(_ context.Context, _ pipeline.Source, e pipeline.Event) { events = append(events, e.Name()) }}).
		With(pipeline.Options[int]{Classifier: func(int, error) (outcome.Verdict, bool) {
			classified = true
			return outcome.Verdict{}, false
		}})
	_, err := p.Execute(t.Context(), func(context.Context) (int, error) { return 1, nil })
	require.NoError(t, err)
	assert.True(t, classified, "the second With set the classifier")
	assert.Equal(t, []string{"attempt"}, events, "and kept the hook the first With set")
}

func TestNilContextIsRefused(t *testing.T) {
	p := pipeline.New[int]()
	//lint:ignore SA1012 the point of the test
	_, err := p.Execute(nil, func(context.Context) (int, error) { return 1, nil }) //nolint:staticcheck
	require.Error(t, err)
	assert.Contains(t, err.Error(), "ctx is nil")
}

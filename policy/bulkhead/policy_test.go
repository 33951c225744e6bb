package bulkhead_test

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
	"github.com/resilience-go/pipeline/criticality"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/pipelinetest"
	"github.com/resilience-go/pipeline/policy/bulkhead"
)

func TestConformance(t *testing.T) {
	t.Run("queueing", func(t *testing.T) {
		// A small bulkhead with a queue long enough for the suite's 64 calls
		// at once: they wait, and the suite cancels them.
		pipelinetest.Run(t, func() pipeline.Policy[string] {
			return bulkhead.Guard[string](mustNew(t, bulkhead.Config{MaxConcurrent: 4, MaxQueue: 64, MaxWait: time.Hour}))
		}, "value")
	})
	t.Run("refusing when full", func(t *testing.T) {
		// No queue: of the suite's 64 calls at once, all but 4 are refused.
		pipelinetest.Run(t, func() pipeline.Policy[string] {
			return bulkhead.Guard[string](mustNew(t, bulkhead.Config{MaxConcurrent: 4}))
		}, "value")
	})
	t.Run("one at a time", func(t *testing.T) {
		pipelinetest.Run(t, func() pipeline.Policy[string] {
			return bulkhead.Guard[string](mustNew(t, bulkhead.Config{MaxConcurrent: 1, MaxQueue: 128, MaxWait: time.Hour}))
		}, "value")
	})
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

func ok(context.Context) (int, error) { return 1, nil }

// block returns work that holds its slot until release is closed.
func block(release <-chan struct{}, inside *atomic.Int32) pipeline.Func[int] {
	return func(ctx context.Context) (int, error) {
		inside.Add(1)
		defer inside.Add(-1)
		select {
		case <-release:
			return 1, nil
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
}

func TestAFullBulkheadRefusesAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := mustNew(t, bulkhead.Config{Name: "db", MaxConcurrent: 2})
		var verdict outcome.Verdict
		rec := &recorder{}
		spy := pipeline.PolicyFunc[int](func(ctx context.Context, next pipeline.Next[int]) pipeline.Result[int] {
			r := next.Run(ctx)
			verdict = r.Verdict
			return r
		})
		p := pipeline.New(spy, bulkhead.Guard[int](b)).With(pipeline.Options[int]{OnEvent: rec.hook})
		holders := pipeline.New(bulkhead.Guard[int](b)) // the same bulkhead
		release := make(chan struct{})
		var inside atomic.Int32
		var wg sync.WaitGroup
		for range 2 {
			wg.Go(func() { _, _ = holders.Execute(t.Context(), block(release, &inside)) })
		}
		synctest.Wait()
		require.EqualValues(t, 2, inside.Load())
		assert.Equal(t, 2, b.InFlight())

		start := time.Now()
		_, err := p.Execute(t.Context(), ok)
		assert.Zero(t, time.Since(start), "no queue: the refusal is immediate")
		stop, isStop := errors.AsType[*pipeline.StopError](err)
		require.True(t, isStop, "want a StopError, got %v", err)
		assert.Equal(t, "bulkhead", stop.Stage)
		assert.Equal(t, "db", stop.Name)
		assert.Zero(t, stop.RetryAfter, "when a slot frees is not the bulkhead's to know")
		assert.Equal(t, outcome.Verdict{Kind: outcome.Throttled, SelfImposed: true}, verdict)
		assert.Equal(t, []pipeline.Event{pipeline.Stopped{Err: stop}}, rec.all())

		close(release)
		wg.Wait()
		assert.Equal(t, 0, b.InFlight(), "every slot is given back")
	})
}

func TestAQueuedCallWaitsItsTurnThenRunsOrGivesUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := mustNew(t, bulkhead.Config{MaxConcurrent: 1, MaxQueue: 2, MaxWait: 2 * time.Second})
		rec := &recorder{}
		p := pipeline.New(bulkhead.Guard[int](b)).With(pipeline.Options[int]{OnEvent: rec.hook})
		release := make(chan struct{})
		var inside atomic.Int32
		go func() { _, _ = p.Execute(t.Context(), block(release, &inside)) }()
		synctest.Wait()

		var order []int
		var mu sync.Mutex
		var wg sync.WaitGroup
		errs := make([]error, 3)
		for i := range 3 {
			wg.Go(func() {
				_, errs[i] = p.Execute(t.Context(), func(context.Context) (int, error) {
					mu.Lock()
					order = append(order, i)
					mu.Unlock()
					return 1, nil
				})
			})
			synctest.Wait() // they queue in this order
		}
		assert.Equal(t, 2, b.Queued())
		stop, isStop := errors.AsType[*pipeline.StopError](errs[2])
		require.True(t, isStop, "the third finds the queue full: %v", errs[2])
		assert.Equal(t, "bulkhead", stop.Stage)

		time.Sleep(time.Second)
		close(release)
		wg.Wait()
		assert.NoError(t, errs[0])
		assert.NoError(t, errs[1])
		assert.Equal(t, []int{0, 1}, order, "first come, first served")
		assert.Contains(t, rec.all(), pipeline.Event(pipeline.Waited{Wait: time.Second}))

		// A queued call whose wait runs out is refused.
		release = make(chan struct{})
		go func() { _, _ = p.Execute(t.Context(), block(release, &inside)) }()
		synctest.Wait()
		start := time.Now()
		_, err := p.Execute(t.Context(), ok)
		assert.Equal(t, 2*time.Second, time.Since(start), "MaxWait")
		stop, isStop = errors.AsType[*pipeline.StopError](err)
		require.True(t, isStop)
		assert.Equal(t, "bulkhead", stop.Stage)
		assert.Equal(t, 0, b.Queued())
		close(release)
	})
}

func TestAQueuedCallHonoursItsContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := mustNew(t, bulkhead.Config{MaxConcurrent: 1, MaxQueue: 1, MaxWait: time.Hour})
		p := pipeline.New(bulkhead.Guard[int](b))
		release := make(chan struct{})
		var inside atomic.Int32
		go func() { _, _ = p.Execute(t.Context(), block(release, &inside)) }()
		synctest.Wait()

		ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := p.Execute(ctx, ok)
		assert.Equal(t, 300*time.Millisecond, time.Since(start))
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		stop, isStop := errors.AsType[*pipeline.StopError](err)
		require.True(t, isStop)
		assert.Equal(t, pipeline.Deadline, stop.Reason)
		assert.Equal(t, "bulkhead", stop.Stage)
		assert.Equal(t, 0, b.Queued(), "a call that gave up leaves the queue")
		close(release)
		synctest.Wait()
		assert.Equal(t, 0, b.InFlight())
	})
}

func TestAPanicGivesTheSlotBack(t *testing.T) {
	b := mustNew(t, bulkhead.Config{MaxConcurrent: 1})
	p := pipeline.New(bulkhead.Guard[int](b))
	assert.Panics(t, func() {
		_, _ = p.Execute(context.Background(), func(context.Context) (int, error) { panic("boom") })
	})
	assert.Equal(t, 0, b.InFlight())
	_, err := p.Execute(context.Background(), ok)
	assert.NoError(t, err)
}

// TestAHeldValueKeepsItsSlot: with a pipeline that keeps returned values alive
// until released (as for HTTP responses), the slot is given back when the
// value is, not when Execute returns.
func TestAHeldValueKeepsItsSlot(t *testing.T) {
	type body struct{ done func() }
	b := mustNew(t, bulkhead.Config{MaxConcurrent: 1})
	p := pipeline.New(bulkhead.Guard[*body](b)).With(pipeline.Options[*body]{
		WhenReleased: func(v *body, done func()) *body { v.done = done; return v },
	})
	v, err := p.Execute(context.Background(), func(context.Context) (*body, error) { return &body{}, nil })
	require.NoError(t, err)
	assert.Equal(t, 1, b.InFlight(), "the response is still being read")
	v.done()
	v.done()
	assert.Equal(t, 0, b.InFlight(), "released once, however often done is called")
}

func TestTheSuccessPathAllocatesNothing(t *testing.T) {
	b := mustNew(t, bulkhead.Config{MaxConcurrent: 1})
	p := pipeline.New(bulkhead.Guard[int](b))
	ctx := context.Background()
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _, _ = p.Execute(ctx, ok) }))
}

func TestARefusalAllocatesNothing(t *testing.T) {
	b := mustNew(t, bulkhead.Config{MaxConcurrent: 1})
	_, held := b.TryAcquire(context.Background())
	require.True(t, held)
	p := pipeline.New(bulkhead.Guard[int](b))
	ctx := context.Background()
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _, _ = p.Execute(ctx, ok) }))
	b.Release(context.Background())
}

func TestSetLimitHandsNewSlotsToTheQueue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := mustNew(t, bulkhead.Config{MaxConcurrent: 1, MaxQueue: 5, MaxWait: time.Hour})
		_, held := b.TryAcquire(context.Background())
		require.True(t, held)
		var got atomic.Int32
		for range 3 {
			go func() {
				if b.Acquire(t.Context()) == nil {
					got.Add(1)
				}
			}()
		}
		synctest.Wait()
		assert.Equal(t, 3, b.Queued())
		b.SetLimit(3)
		synctest.Wait()
		assert.EqualValues(t, 2, got.Load(), "two new slots, handed to the first two in the queue")
		assert.Equal(t, 3, b.InFlight())

		b.SetLimit(1)
		b.Release(context.Background())
		synctest.Wait()
		assert.EqualValues(t, 2, got.Load(), "above the new limit, a slot given back is not passed on")
		assert.Equal(t, 2, b.InFlight())
		b.Release(context.Background())
		b.Release(context.Background())
		synctest.Wait()
		assert.EqualValues(t, 3, got.Load(), "under it again, the queue moves")
		b.Release(context.Background())
	})
}

func TestATenantsSuccessPathAllocatesNothing(t *testing.T) {
	b := mustNew(t, bulkhead.Config{MaxConcurrent: 2, TenantShare: 0.5})
	p := pipeline.New(bulkhead.Guard[int](b))
	ctx := criticality.WithTenant(context.Background(), "acme")
	_, _ = p.Execute(ctx, ok)
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _, _ = p.Execute(ctx, ok) }))
}

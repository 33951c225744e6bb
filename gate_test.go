package pipeline_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/pipelinetest"
)

// learner is a Learner for the tests: a semaphore of free slots that records
// what its stage asked of it, hands out permits whose Value is the number of
// the admission, and reports each admission and each Done with an event.
type learner struct {
	mu       sync.Mutex
	free     int
	spent    bool // hand out spent permits
	admitted int
	released []int64 // the Value of each permit given back
	done     []int64 // the Value of each permit Done was told of
	verdicts []outcome.Verdict
	observed []bool // ev.Observed() at each Admit
}

// refused is the refusal of a learner with no free slot.
var refused = &pipeline.StopError{Stage: "learner", Name: "dep", Reason: pipeline.ConcurrencyLimited, RetryAfter: time.Second}

// admittedEvent and learnedEvent are what a learner emits.
type (
	admittedEvent struct{ n int64 }
	learnedEvent  struct{ v outcome.Verdict }
)

func (admittedEvent) Name() string { return "learner.admitted" }
func (learnedEvent) Name() string  { return "learner.learned" }

func (g *learner) Stage() pipeline.StageInfo { return pipeline.StageInfo{Kind: "learner", Name: "dep"} }

func (g *learner) Admit(ctx context.Context, ev pipeline.Events) (pipeline.Permit, *pipeline.StopError) {
	g.mu.Lock()
	g.observed = append(g.observed, ev.Observed())
	if g.free == 0 {
		g.mu.Unlock()
		return pipeline.Permit{}, refused
	}
	g.admitted++
	if !g.spent {
		g.free--
	}
	p := pipeline.Permit{Value: int64(g.admitted), Spent: g.spent}
	g.mu.Unlock()
	if ev.Observed() {
		ev.Emit(ctx, admittedEvent{p.Value})
	}
	return p, nil
}

func (g *learner) Done(ctx context.Context, p pipeline.Permit, v outcome.Verdict, ev pipeline.Events) {
	g.mu.Lock()
	g.done = append(g.done, p.Value)
	g.verdicts = append(g.verdicts, v)
	g.mu.Unlock()
	ev.Emit(ctx, learnedEvent{v})
}

func (g *learner) Release(_ context.Context, p pipeline.Permit) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.released = append(g.released, p.Value)
	g.free++
}

// state returns what the stage has asked of g so far.
func (g *learner) state() (free int, done, released []int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.free, append([]int64(nil), g.done...), append([]int64(nil), g.released...)
}

// bucket is a Gate whose permits are spent, as a rate limiter's tokens are,
// and which never refuses.
type bucket struct{}

func (bucket) Stage() pipeline.StageInfo { return pipeline.StageInfo{Kind: "bucket"} }

func (bucket) Admit(context.Context, pipeline.Events) (pipeline.Permit, *pipeline.StopError) {
	return pipeline.Permit{Spent: true}, nil
}

func (bucket) Release(context.Context, pipeline.Permit) { panic("a spent permit was released") }

func TestGuardRunsTheRestWithAPermit(t *testing.T) {
	g := &learner{free: 1}
	p := pipeline.New(pipeline.Guard[int](g))
	v, err := p.Execute(t.Context(), func(context.Context) (int, error) {
		free, done, released := g.state()
		assert.Zero(t, free, "the call holds the slot while it runs")
		assert.Empty(t, done)
		assert.Empty(t, released)
		return 7, nil
	})
	require.NoError(t, err)
	assert.Equal(t, 7, v)
	free, done, released := g.state()
	assert.Equal(t, 1, free)
	assert.Equal(t, []int64{1}, done, "Done is handed the permit Admit gave")
	assert.Equal(t, []int64{1}, released, "and so is Release, once")
	assert.Equal(t, []outcome.Verdict{{Kind: outcome.OK}}, g.verdicts)
}

func TestGuardTeachesTheVerdictOfTheResult(t *testing.T) {
	g := &learner{free: 1}
	p := pipeline.New(pipeline.Guard[int](g))
	boom := errors.New("connection reset")
	_, err := p.Execute(t.Context(), func(context.Context) (int, error) { return 0, boom })
	assert.ErrorIs(t, err, boom)
	require.Len(t, g.verdicts, 1)
	assert.Equal(t, outcome.Transient, g.verdicts[0].Kind)
	free, _, released := g.state()
	assert.Equal(t, 1, free)
	assert.Len(t, released, 1)
}

func TestGuardRefusalReachesTheCaller(t *testing.T) {
	g := &learner{free: 0}
	var stopped []*pipeline.StopError
	var verdict outcome.Verdict
	outer := pipeline.PolicyFunc[int](func(ctx context.Context, next pipeline.Next[int]) pipeline.Result[int] {
		r := next.Run(ctx)
		verdict = r.Verdict
		return r
	})
	p := pipeline.New(outer, pipeline.Guard[int](g)).With(pipeline.Options[int]{
		OnEvent: func(_ context.Context, _ pipeline.Source, e pipeline.Event) {
			if s, ok := e.(pipeline.Stopped); ok {
				stopped = append(stopped, s.Err)
			}
		},
	})
	ran := false
	_, err := p.Execute(t.Context(), func(context.Context) (int, error) { ran = true; return 1, nil })
	assert.False(t, ran, "a refused call does not run")
	stop, ok := errors.AsType[*pipeline.StopError](err)
	require.True(t, ok, "got %v", err)
	assert.Same(t, refused, stop, "the gate's own StopError reaches the caller")
	assert.ErrorIs(t, err, pipeline.ConcurrencyLimited)
	assert.Equal(t, []*pipeline.StopError{refused}, stopped, "and is reported as Stopped")
	assert.Equal(t, outcome.Verdict{Kind: outcome.Throttled, SelfImposed: true}.WithRetryAfter(time.Second), verdict,
		"with the verdict Next.Refuse gives it")
	_, done, released := g.state()
	assert.Empty(t, done, "a refusal is not Done")
	assert.Empty(t, released, "nor released")
}

func TestGuardContextDoneTakesNoPermit(t *testing.T) {
	for _, c := range []struct {
		name   string
		ctx    func() context.Context
		reason pipeline.Reason
	}{
		{"canceled", func() context.Context {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx
		}, pipeline.Canceled},
		{"deadline", func() context.Context {
			ctx, cancel := context.WithDeadline(context.Background(), time.Unix(0, 0))
			t.Cleanup(cancel)
			return ctx
		}, pipeline.Deadline},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := &learner{free: 1}
			p := pipeline.New(pipeline.Guard[int](g))
			_, err := p.Execute(c.ctx(), func(context.Context) (int, error) { return 1, nil })
			stop, ok := errors.AsType[*pipeline.StopError](err)
			require.True(t, ok, "got %v", err)
			assert.Equal(t, c.reason, stop.Reason)
			assert.Equal(t, "learner", stop.Stage, "the stop names the gate's stage")
			assert.Equal(t, "dep", stop.Name)
			assert.Zero(t, g.admitted, "the gate was not asked")
			assert.Empty(t, g.observed)
		})
	}
}

func TestGuardPanicReleasesThePermitOnce(t *testing.T) {
	for _, holds := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "holds"}[holds], func(t *testing.T) {
			g := &learner{free: 1}
			p := pipeline.New(pipeline.Guard[*resource](g))
			if holds {
				p = p.With((&resources{}).options())
			}
			assert.PanicsWithValue(t, "boom", func() {
				_, _ = p.Execute(t.Context(), func(context.Context) (*resource, error) { panic("boom") })
			})
			free, done, released := g.state()
			assert.Equal(t, 1, free)
			assert.Empty(t, done, "a call that panicked has no verdict")
			assert.Equal(t, []int64{1}, released)
			v, err := p.Execute(t.Context(), func(context.Context) (*resource, error) { return &resource{}, nil })
			require.NoError(t, err, "the slot is free again")
			v.Close()
			free, _, _ = g.state()
			assert.Equal(t, 1, free)
		})
	}
}

func TestGuardPanicOutOfDoneReleasesThePermit(t *testing.T) {
	g := &learner{free: 1}
	p := pipeline.New(pipeline.Guard[int](g)).With(pipeline.Options[int]{
		OnEvent: func(_ context.Context, _ pipeline.Source, e pipeline.Event) {
			if _, ok := e.(learnedEvent); ok {
				panic("hook")
			}
		},
	})
	assert.PanicsWithValue(t, "hook", func() {
		_, _ = p.Execute(t.Context(), func(context.Context) (int, error) { return 1, nil })
	})
	free, done, released := g.state()
	assert.Equal(t, 1, free)
	assert.Equal(t, []int64{1}, done)
	assert.Equal(t, []int64{1}, released)
}

func TestGuardHeldValueReleasesThePermitWhenReleased(t *testing.T) {
	g := &learner{free: 1}
	rs := &resources{}
	p := pipeline.New(pipeline.Guard[*resource](g)).With(rs.options())
	v, err := p.Execute(t.Context(), func(ctx context.Context) (*resource, error) { return rs.make(ctx, false), nil })
	require.NoError(t, err)
	free, done, released := g.state()
	assert.Zero(t, free, "the value is still being read")
	assert.Equal(t, []int64{1}, done, "Done learns as the call returns")
	assert.Empty(t, released)
	v.Close()
	v.Close()
	free, _, released = g.state()
	assert.Equal(t, 1, free)
	assert.Equal(t, []int64{1}, released, "once, however often the value is released")
}

func TestGuardHeldZeroValueReleasesThePermitAtOnce(t *testing.T) {
	g := &learner{free: 1}
	p := pipeline.New(pipeline.Guard[*resource](g)).With((&resources{}).options())
	_, err := p.Execute(t.Context(), func(context.Context) (*resource, error) { return nil, errors.New("refused") })
	require.Error(t, err)
	free, done, released := g.state()
	assert.Equal(t, 1, free, "a zero value holds nothing")
	assert.Equal(t, []int64{1}, done)
	assert.Equal(t, []int64{1}, released)
}

func TestGuardSpentPermitIsNotReleased(t *testing.T) {
	g := &learner{free: 1, spent: true}
	held := 0
	p := pipeline.New(pipeline.Guard[*resource](g)).With(pipeline.Options[*resource]{
		WhenReleased: func(r *resource, _ func()) *resource { held++; return r },
	})
	for range 3 {
		_, err := p.Execute(t.Context(), func(ctx context.Context) (*resource, error) { return &resource{}, nil })
		require.NoError(t, err)
	}
	free, done, released := g.state()
	assert.Equal(t, 1, free)
	assert.Equal(t, []int64{1, 2, 3}, done, "a Learner still learns")
	assert.Empty(t, released, "nothing is given back")
	assert.Zero(t, held, "nothing lives on with the value")
}

func TestGuardGateEmitsWithItsStagesLabels(t *testing.T) {
	type heardEvent struct {
		src pipeline.Source
		e   pipeline.Event
	}
	var heard []heardEvent
	g := &learner{free: 1}
	p := pipeline.New(pipeline.Guard[int](g)).With(pipeline.Options[int]{
		Name: "payments",
		OnEvent: func(_ context.Context, src pipeline.Source, e pipeline.Event) {
			if _, ok := e.(pipeline.AttemptFinished); !ok {
				heard = append(heard, heardEvent{src, e})
			}
		},
	})
	_, err := p.Execute(t.Context(), func(context.Context) (int, error) { return 1, nil })
	require.NoError(t, err)
	src := pipeline.Source{Pipeline: "payments", Stage: "learner", Name: "dep"}
	assert.Equal(t, []heardEvent{
		{src, admittedEvent{1}},
		{src, learnedEvent{outcome.Verdict{Kind: outcome.OK}}},
	}, heard)

	unobserved := pipeline.New(pipeline.Guard[int](g))
	_, err = unobserved.Execute(t.Context(), func(context.Context) (int, error) { return 1, nil })
	require.NoError(t, err)
	assert.Equal(t, []bool{true, false}, g.observed, "a pipeline without a hook is not observed")
}

func TestGuardPanicsOnANilGate(t *testing.T) {
	assert.PanicsWithValue(t, "pipeline: Guard: gate is nil", func() { pipeline.Guard[int](nil) })
	assert.PanicsWithValue(t, "pipeline: Guard: gate is nil", func() { pipeline.Guard[int]((*semaphore)(nil)) })
}

func TestGuardDescribesItselfAsItsGate(t *testing.T) {
	p := pipeline.New(pipeline.Guard[int](&learner{}), pipeline.Guard[int](&semaphore{}))
	assert.Equal(t, []pipeline.StageInfo{{Kind: "learner", Name: "dep"}, {Kind: "semaphore"}}, p.Stages())
}

func TestGuardAllocatesNothing(t *testing.T) {
	sem := &semaphore{slots: make(chan struct{}, 1)}
	ok := pipeline.New(pipeline.Guard[int](sem))
	spent := pipeline.New(pipeline.Guard[int](bucket{}))
	full := &semaphore{slots: make(chan struct{}, 1)}
	full.slots <- struct{}{}
	refusing := pipeline.New(pipeline.Guard[int](full))
	ctx := context.Background()
	fn := func(context.Context) (int, error) { return 1, nil }
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _, _ = ok.Execute(ctx, fn) }), "a permit given back")
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _, _ = spent.Execute(ctx, fn) }), "a spent permit")
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _, _ = refusing.Execute(ctx, fn) }), "a refusal")
}

func TestGuardConforms(t *testing.T) {
	pipelinetest.Run(t, func() pipeline.Policy[string] {
		return pipeline.Guard[string](&semaphore{slots: make(chan struct{}, 8)})
	}, "value")
}

// TestGuardHammer runs many calls at once through a semaphore of a few
// slots, some of which fail, panic or keep their value alive, and checks
// that never more calls are inside than there are slots, and that every
// slot is back at the end.
func TestGuardHammer(t *testing.T) {
	const slots = 3
	sem := &semaphore{slots: make(chan struct{}, slots)}
	var inside, most atomic.Int32
	rs := &resources{}
	plain := pipeline.New(pipeline.Guard[*resource](sem))
	holding := plain.With(rs.options())
	var wg sync.WaitGroup
	for i := range 64 {
		wg.Go(func() {
			p := plain
			if i%2 == 0 {
				p = holding
			}
			for j := range 50 {
				func() {
					defer func() { _ = recover() }()
					v, _ := p.Execute(t.Context(), func(ctx context.Context) (*resource, error) {
						n := inside.Add(1)
						defer inside.Add(-1)
						for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
						}
						switch (i + j) % 4 {
						case 1:
							return nil, errors.New("boom")
						case 2:
							panic("boom")
						}
						return rs.make(ctx, false), nil
					})
					if v != nil {
						v.Close()
					}
				}()
			}
		})
	}
	wg.Wait()
	assert.LessOrEqual(t, most.Load(), int32(slots))
	assert.Zero(t, len(sem.slots), "every slot is back")
}

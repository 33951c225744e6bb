package pipeline_test

import (
	"context"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
)

// entered is a stage that records the reading it was entered with, then
// runs the rest through pass, which may hand a reading inward.
func entered(got *time.Duration, pass func(pipeline.Next[int]) pipeline.Next[int]) pipeline.Policy[int] {
	return pipeline.PolicyFunc[int](func(ctx context.Context, next pipeline.Next[int]) pipeline.Result[int] {
		*got = next.Entered()
		return pass(next).Run(ctx)
	})
}

func plain(n pipeline.Next[int]) pipeline.Next[int] { return n }

// A reading handed inward with At is the Entered of the stage right
// inside, and of no stage further in unless that one hands it on (Onward);
// a stage handed nothing reads the clock. The attempt starts at the
// reading handed to it, so that its duration is measured from there.
func TestAReadingIsHandedOneStageAtATime(t *testing.T) {
	fake := clockwork.NewFakeClock()
	var a, b, c time.Duration
	var attempt pipeline.AttemptFinished
	hand := func(r time.Duration) func(pipeline.Next[int]) pipeline.Next[int] {
		return func(n pipeline.Next[int]) pipeline.Next[int] { return n.At(r) }
	}
	for _, tc := range []struct {
		name    string
		middle  func(pipeline.Next[int]) pipeline.Next[int]
		wantC   func(now time.Duration) time.Duration
		attempt time.Duration // the attempt's duration, the clock moving 3s during the work
	}{
		{"passed on", pipeline.Next[int].Onward, func(time.Duration) time.Duration { return 42 }, 3*time.Second + fakeAt(fake) - 42},
		{"not passed on", plain, func(now time.Duration) time.Duration { return now }, 3 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := pipeline.New(entered(&a, hand(42)), entered(&b, tc.middle), entered(&c, pipeline.Next[int].Onward)).With(pipeline.Options[int]{
				Clock:     fake,
				OnAttempt: func(_ context.Context, _ pipeline.Source, e pipeline.AttemptFinished) { attempt = e },
			})
			now := fakeAt(fake)
			_, err := p.Execute(context.Background(), func(context.Context) (int, error) {
				fake.Advance(3 * time.Second)
				return 1, nil
			})
			require.NoError(t, err)
			assert.Equal(t, now, a, "the outermost stage reads the clock")
			assert.Equal(t, time.Duration(42), b, "the stage right inside gets the reading handed to it")
			assert.Equal(t, tc.wantC(now), c)
			assert.Equal(t, tc.attempt, attempt.Duration)
			fake.Advance(time.Minute)
		})
	}
}

// fakeAt is a pipeline's reading of fake now.
func fakeAt(fake *clockwork.FakeClock) time.Duration {
	var r time.Duration
	p := pipeline.New(entered(&r, plain)).With(pipeline.Options[int]{Clock: fake})
	_, _ = p.Execute(context.Background(), func(context.Context) (int, error) { return 0, nil })
	return r
}

// A stage that may abandon the work hands no reading inward: the grace takes its
// place. Turning the guard off (a grace of 0) keeps a reading handed.
func TestAGuardingNextHandsNoReading(t *testing.T) {
	var got time.Duration
	for _, tc := range []struct {
		name   string
		pass   func(pipeline.Next[int]) pipeline.Next[int]
		handed bool
	}{
		{"guarded after At", func(n pipeline.Next[int]) pipeline.Next[int] { return n.At(7).AbandonAfter(time.Second) }, false},
		{"At after guarding", func(n pipeline.Next[int]) pipeline.Next[int] { return n.AbandonAfter(time.Second).At(7) }, false},
		{"a grace of 0", func(n pipeline.Next[int]) pipeline.Next[int] { return n.At(7).AbandonAfter(0) }, true},
		{"a guard turned off", func(n pipeline.Next[int]) pipeline.Next[int] {
			return n.AbandonAfter(time.Second).AbandonAfter(0).At(7)
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := pipeline.New(pipeline.PolicyFunc[int](func(ctx context.Context, next pipeline.Next[int]) pipeline.Result[int] {
				return tc.pass(next).Run(ctx)
			}), entered(&got, plain))
			_, err := p.Execute(context.Background(), func(context.Context) (int, error) { return 1, nil })
			require.NoError(t, err)
			assert.Equal(t, tc.handed, got == 7, "Entered = %v", got)
		})
	}
}

// SharesClock tells a stage on real time (a nil clock) from one on the
// pipeline's injected clock.
func TestSharesClockComparesWithThePipelinesClock(t *testing.T) {
	fake, other := clockwork.NewFakeClock(), clockwork.NewFakeClock()
	var real, injected, foreign bool
	probe := pipeline.PolicyFunc[int](func(ctx context.Context, next pipeline.Next[int]) pipeline.Result[int] {
		real, injected, foreign = next.SharesClock(nil), next.SharesClock(fake), next.SharesClock(other)
		return next.Run(ctx)
	})
	run := func(p *pipeline.Pipeline[int]) {
		_, err := p.Execute(context.Background(), func(context.Context) (int, error) { return 1, nil })
		require.NoError(t, err)
	}
	run(pipeline.New(probe))
	assert.True(t, real)
	assert.False(t, injected)
	run(pipeline.New(probe).With(pipeline.Options[int]{Clock: fake}))
	assert.False(t, real)
	assert.True(t, injected)
	assert.False(t, foreign)
}

// Within puts stages outside a pipeline's own and keeps its options.
func TestWithinWrapsAPipelineKeepingItsOptions(t *testing.T) {
	var order []string
	stage := func(name string) pipeline.Policy[int] {
		return pipeline.PolicyFunc[int](func(ctx context.Context, next pipeline.Next[int]) pipeline.Result[int] {
			order = append(order, name)
			return next.Run(ctx)
		})
	}
	var sources []pipeline.Source
	released := 0
	inner := pipeline.New(stage("inner")).With(pipeline.Options[int]{
		Name:    "payments",
		OnEvent: func(_ context.Context, src pipeline.Source, _ pipeline.Event) { sources = append(sources, src) },
		Release: func(int) { released++ },
	})
	p := inner.Within(stage("first"), stage("second"))
	_, err := p.Execute(context.Background(), func(context.Context) (int, error) { return 1, nil })
	require.NoError(t, err)
	assert.Equal(t, []string{"first", "second", "inner"}, order)
	assert.Equal(t, "payments", p.Name())
	require.Len(t, sources, 1, "the attempt's event reaches the hook")
	assert.Equal(t, "payments", sources[0].Pipeline)
	assert.Len(t, p.Stages(), 3)
	assert.Len(t, inner.Stages(), 1, "the pipeline wrapped is unchanged")
	assert.PanicsWithValue(t, "pipeline: New: policy 1 of 2 is nil", func() { inner.Within(nil) })
}

// OnAttempt receives every attempt in place of OnEvent, and delivering it
// allocates nothing.
func TestOnAttemptTakesTheAttemptsWithoutAllocating(t *testing.T) {
	var attempts, events int
	p := pipeline.New[int]().With(pipeline.Options[int]{
		OnAttempt: func(context.Context, pipeline.Source, pipeline.AttemptFinished) { attempts++ },
		OnEvent:   func(context.Context, pipeline.Source, pipeline.Event) { events++ },
	})
	ok := func(context.Context) (int, error) { return 1, nil }
	_, err := p.Execute(context.Background(), ok)
	require.NoError(t, err)
	assert.Equal(t, 1, attempts)
	assert.Zero(t, events)
	assert.Zero(t, testing.AllocsPerRun(100, func() { _, _ = p.Execute(context.Background(), ok) }))
}

// New refuses more stages than a position can count.
func TestNewRefusesTooManyStages(t *testing.T) {
	pass := pipeline.PolicyFunc[int](func(ctx context.Context, next pipeline.Next[int]) pipeline.Result[int] { return next.Run(ctx) })
	stages := make([]pipeline.Policy[int], 1<<16)
	for i := range stages {
		stages[i] = pass
	}
	assert.PanicsWithValue(t, "pipeline: New: 65536 policies, more than the 65535 a pipeline may have", func() { pipeline.New(stages...) })
}

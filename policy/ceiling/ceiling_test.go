package ceiling_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/pipelinetest"
	"github.com/resilience-go/pipeline/policy/ceiling"
	"github.com/resilience-go/pipeline/policy/timeout"
)

// Unarmed: the estimator is empty, every attempt passes through.
func TestConformanceUnarmed(t *testing.T) {
	pipelinetest.Run(t, func() pipeline.Policy[string] { return stage(t, ceiling.Config{}) }, "value")
}

// Armed: a warm estimator puts the ceiling at the 250 ms floor, far above
// the suite's slowest work (5 ms), so the checks hold the armed path (its
// context, its Hold) to the rules.
func TestConformanceArmed(t *testing.T) {
	pipelinetest.Run(t, func() pipeline.Policy[string] {
		est := warm(t, ceiling.DefaultMinSamples, time.Millisecond)
		p := stage(t, ceiling.Config{Estimator: est})
		_, armed := p.Limit(est.Now())
		require.True(t, armed)
		return p
	}, "value")
}

func TestCutsAHungAttemptAtItsCeiling(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		est := warm(t, ceiling.DefaultMinSamples, 100*time.Millisecond)
		p := stage(t, ceiling.Config{Name: "db", Estimator: est})
		limit, armed := p.Limit(est.Now())
		require.True(t, armed)
		measured, _ := est.Quantile(est.Now(), ceiling.DefaultQuantile)
		require.InDelta(t, float64(100*time.Millisecond), float64(measured), float64(10*time.Millisecond), "the p95 of a steady 100 ms")
		require.Equal(t, 3*measured, limit, "3 × the p95")

		ev := &events{}
		var verdict outcome.Verdict
		var cause error
		start := time.Now()
		_, err := pipeline.New(spy[string](&verdict), pipeline.Policy[string](p)).With(pipeline.Options[string]{OnEvent: ev.add}).
			Execute(t.Context(), func(ctx context.Context) (string, error) {
				<-ctx.Done()
				cause = context.Cause(ctx)
				return "", ctx.Err()
			})
		assert.Equal(t, limit, time.Since(start), "cut at exactly the ceiling")

		ours, ok := errors.AsType[*timeout.Error](cause)
		require.True(t, ok, "inside the work, context.Cause must name the ceiling: %v", cause)
		assert.Equal(t, timeout.Error{Duration: limit, Measured: measured, Quantile: 0.95}, *ours)
		assert.Equal(t, fmt.Sprintf("pipeline: attempt ceiling of %v passed (measured p95: %v)", limit, measured), ours.Error())

		stop, ok := errors.AsType[*pipeline.StopError](err)
		require.True(t, ok, "want a StopError, got %v", err)
		assert.Equal(t, "ceiling", stop.Stage)
		assert.Equal(t, "db", stop.Name)
		assert.Equal(t, pipeline.Deadline, stop.Reason)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.ErrorIs(t, err, outcome.ErrTimeout)
		assert.Equal(t, outcome.Transient, verdict.Kind, "a cut attempt is Transient, as any our deadline cut")
		assert.False(t, verdict.Canceled)
		es := ev.list()
		assert.Contains(t, es, pipeline.Event(timeout.TimedOut{Timeout: limit, Measured: measured}))
		assert.Contains(t, es, pipeline.Event(pipeline.Stopped{Err: stop}))
	})
}

// Until the estimator holds MinSamples samples, the stage cuts nothing.
func TestUnarmedUntilMinSamples(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		est := warm(t, ceiling.DefaultMinSamples-1, time.Millisecond)
		p := stage(t, ceiling.Config{Estimator: est, FedElsewhere: true})
		_, armed := p.Limit(est.Now())
		require.False(t, armed)
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		start := time.Now()
		_, err := pipeline.New[string](p).Execute(ctx, hang)
		assert.Equal(t, time.Minute, time.Since(start), "only the caller's deadline ended it")
		assert.NotErrorIs(t, err, outcome.ErrTimeout)
	})
}

func TestFloorAndCap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fast := warm(t, 60, 20*time.Microsecond)
		limit, armed := stage(t, ceiling.Config{Estimator: fast}).Limit(fast.Now())
		assert.True(t, armed)
		assert.Equal(t, ceiling.DefaultFloor, limit, "a ceiling is never below the floor")

		slow := warm(t, 60, 30*time.Second)
		limit, _ = stage(t, ceiling.Config{Estimator: slow}).Limit(slow.Now())
		assert.Equal(t, ceiling.DefaultCap, limit, "nor above the cap")

		measured, _ := slow.Quantile(slow.Now(), ceiling.DefaultQuantile)
		limit, _ = stage(t, ceiling.Config{Estimator: slow, Cap: time.Minute, Multiple: 1.5}).Limit(slow.Now())
		assert.Equal(t, time.Duration(1.5*float64(measured)), limit, "1.5 × the p95 of a steady 30 s, under a cap of a minute")
	})
}

// The stage feeds the estimator with successes unless told another stage
// does; it records the attempts it cut either way.
func TestWhatItRecords(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for _, fedElsewhere := range []bool{false, true} {
			est := warm(t, ceiling.DefaultMinSamples, 100*time.Millisecond)
			pl := pipeline.New[string](stage(t, ceiling.Config{Estimator: est, FedElsewhere: fedElsewhere}))
			before := samples(est)
			_, err := pl.Execute(t.Context(), func(context.Context) (string, error) {
				time.Sleep(40 * time.Millisecond)
				return "ok", nil
			})
			require.NoError(t, err)
			_, _ = pl.Execute(t.Context(), func(context.Context) (string, error) { return "", errors.New("fast failure") })
			successes := 1
			if fedElsewhere {
				successes = 0
			}
			assert.Equal(t, before+successes, samples(est), "successes recorded (FedElsewhere %v); failures never", fedElsewhere)
			_, err = pl.Execute(t.Context(), hang)
			require.ErrorIs(t, err, outcome.ErrTimeout)
			assert.Equal(t, before+successes+1, samples(est), "a cut is recorded (FedElsewhere %v)", fedElsewhere)
		}
		// Unarmed, successes are recorded too: that is how it arms.
		p := stage(t, ceiling.Config{})
		pl := pipeline.New[string](p)
		for range ceiling.DefaultMinSamples {
			_, _ = pl.Execute(t.Context(), func(context.Context) (string, error) { return "ok", nil })
		}
		assert.Equal(t, ceiling.DefaultMinSamples, samples(p.Estimator()))
		_, armed := p.Limit(p.Estimator().Now())
		assert.True(t, armed)
	})
}

// When the dependency slows down as a whole, the cuts raise the measure and
// the ceiling rises until the new normal passes: a few attempts are cut, not
// every attempt until the window forgets.
func TestCeilingRisesWhenTheDependencySlowsDown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		est := warm(t, 200, 100*time.Millisecond)
		p := stage(t, ceiling.Config{Estimator: est})
		pl := pipeline.New[string](p)
		slow := func(ctx context.Context) (string, error) { // 10× slower than it was
			select {
			case <-time.After(time.Second):
				return "ok", nil
			case <-ctx.Done():
				return "", ctx.Err()
			}
		}
		cuts := 0
		for ; cuts < 100; cuts++ {
			if _, err := pl.Execute(t.Context(), slow); err == nil {
				break
			}
		}
		assert.Less(t, cuts, 40, "the ceiling rose after %d cuts", cuts)
		limit, _ := p.Limit(est.Now())
		assert.Greater(t, limit, time.Second)
		for range 20 {
			_, err := pl.Execute(t.Context(), slow)
			assert.NoError(t, err, "the new normal passes")
		}
	})
}

// The attempt's context lives on with the value it returned until the value
// is released, as the timeout stage's does.
func TestReturnedValueHoldsItsContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		est := warm(t, ceiling.DefaultMinSamples, 100*time.Millisecond)
		type body struct{ done func() }
		p, err := ceiling.New[*body](ceiling.Config{Estimator: est})
		require.NoError(t, err)
		pl := pipeline.New[*body](p).With(pipeline.Options[*body]{
			Release:      func(b *body) { b.done() },
			WhenReleased: func(b *body, done func()) *body { b.done = done; return b },
		})
		var attempt context.Context
		b, err := pl.Execute(t.Context(), func(ctx context.Context) (*body, error) {
			attempt = ctx
			return &body{done: func() {}}, nil
		})
		require.NoError(t, err)
		assert.NoError(t, attempt.Err(), "alive while the value is held")
		b.done()
		assert.ErrorIs(t, attempt.Err(), context.Canceled, "ended when the value is released")
	})
}

// The caller's own deadline is the caller's, not a cut.
func TestCallersDeadlineIsNotACut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		est := warm(t, ceiling.DefaultMinSamples, 100*time.Millisecond)
		pl := pipeline.New[string](stage(t, ceiling.Config{Estimator: est}))
		ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
		defer cancel()
		before := samples(est)
		_, err := pl.Execute(ctx, hang)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.NotErrorIs(t, err, outcome.ErrTimeout)
		assert.Equal(t, before, samples(est), "not a latency sample")
	})
}

func TestStageInfo(t *testing.T) {
	info := pipeline.StageInfo{Kind: "ceiling", Name: "db"}
	assert.Equal(t, info, stage(t, ceiling.Config{Name: "db"}).Stage())
}

// Unarmed, a call allocates nothing; armed, it allocates what
// context.WithTimeoutCause does, and no more: the cause is shared while the
// ceiling holds.
func TestAllocations(t *testing.T) {
	ctx, work := context.Background(), func(context.Context) (int, error) { return 1, nil }
	cold, err := ceiling.New[int](ceiling.Config{FedElsewhere: true})
	require.NoError(t, err)
	pl := pipeline.New[int](cold)
	assert.Zero(t, testing.AllocsPerRun(100, func() { _, _ = pl.Execute(ctx, work) }))

	armed, err := ceiling.New[int](ceiling.Config{Estimator: warm(t, ceiling.DefaultMinSamples, time.Millisecond)})
	require.NoError(t, err)
	pl = pipeline.New[int](armed)
	withTimeout := testing.AllocsPerRun(100, func() {
		_, cancel := context.WithTimeoutCause(ctx, time.Second, outcome.ErrTimeout)
		cancel()
	})
	assert.Equal(t, withTimeout, testing.AllocsPerRun(100, func() { _, _ = pl.Execute(ctx, work) }))
}

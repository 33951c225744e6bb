package pipeline_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/pipelinetest"
)

// abandoning is a stage that abandons the work grace after its deadline, which it gives.
func abandoning(grace, deadline time.Duration) pipeline.Policy[int] {
	return pipeline.PolicyFunc[int](func(ctx context.Context, next pipeline.Next[int]) pipeline.Result[int] {
		ctx, cancel := context.WithTimeout(ctx, deadline)
		defer cancel()
		return next.AbandonAfter(grace).Run(ctx)
	})
}

func TestAbandonAfterRunsTheWorkElsewhere(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		before := pipelinetest.Goroutines()
		var during int
		v, err := pipeline.New(abandoning(time.Second, time.Hour)).Execute(t.Context(), func(context.Context) (int, error) {
			during = pipelinetest.Goroutines()
			return 5, nil
		})
		require.NoError(t, err)
		assert.Equal(t, 5, v)
		assert.Equal(t, before+1, during, "the work runs on a goroutine of its own")
		synctest.Wait()
		assert.Equal(t, before, pipelinetest.Goroutines(), "and that goroutine is gone")
	})
}

func TestAbandonAfterGivesUpOnWorkThatIgnoresItsContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var events []pipeline.Event
		p := pipeline.New(abandoning(time.Second, 2*time.Second)).With(pipeline.Options[int]{
			OnEvent: func(_ context.Context, _ pipeline.Source, e pipeline.Event) { events = append(events, e) },
		})
		release := make(chan struct{})
		start := time.Now()
		_, err := p.Execute(t.Context(), func(context.Context) (int, error) {
			<-release
			return 1, nil
		})
		assert.Equal(t, 3*time.Second, time.Since(start), "the deadline plus the grace")
		assert.ErrorIs(t, err, pipeline.ErrAbandoned)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		require.Len(t, events, 2)
		assert.Equal(t, pipeline.Abandoned{Attempt: 1, Grace: time.Second}, events[0])
		finished, ok := events[1].(pipeline.AttemptFinished)
		require.True(t, ok)
		assert.Equal(t, 3*time.Second, finished.Duration)
		assert.True(t, finished.Verdict.Canceled, "a deadline that is not our timeout's is the caller's")

		close(release)
		synctest.Wait()
		require.Len(t, events, 3)
		assert.Equal(t, pipeline.LateReturn{Attempt: 1, After: 0}, events[2])
	})
}

func TestAbandonAfterRaisesThePanicOnTheCaller(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := pipeline.New(abandoning(time.Second, time.Hour))
		boom := errors.New("boom")
		func() {
			defer func() {
				pe, ok := recover().(*pipeline.PanicError)
				require.True(t, ok)
				assert.ErrorIs(t, pe, boom)
			}()
			_, _ = p.Execute(t.Context(), func(context.Context) (int, error) { panic(boom) })
		}()
		v, err := p.Execute(t.Context(), func(context.Context) (int, error) { return 2, nil })
		require.NoError(t, err)
		assert.Equal(t, 2, v, "the pooled detached is reusable after a panic")
	})
}

func TestAbandonAfterZeroRunsInline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		before := pipelinetest.Goroutines()
		_, err := pipeline.New(abandoning(0, time.Hour)).Execute(t.Context(), func(context.Context) (int, error) {
			assert.Equal(t, before, pipelinetest.Goroutines())
			return 0, outcome.MarkPermanent(errors.New("x"))
		})
		require.Error(t, err)
	})
}

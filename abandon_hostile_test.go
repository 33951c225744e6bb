package pipeline_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"runtime"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
)

// TestAbandonedWorkNeverStartsLate: when the grace is over before the detached's
// goroutine is first scheduled, the call returns ErrAbandoned and the work must
// then never start, or a retry outside could send the same request twice. With
// one P, a canceled context and a grace of 1 ns, the caller finds the grace's
// timer already due and leaves before the goroutine runs.
func TestAbandonedWorkNeverStartsLate(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p := pipeline.New(abandoning(time.Nanosecond, time.Hour))
	var returned, late, abandoned atomic.Int32
	for range 200 {
		returned.Store(0)
		_, err := p.Execute(ctx, func(context.Context) (int, error) {
			if returned.Load() == 1 {
				late.Add(1)
			}
			return 1, nil
		})
		returned.Store(1)
		if errors.Is(err, pipeline.ErrAbandoned) {
			abandoned.Add(1)
		}
		for range 10 { // let the detached goroutine run, if it is going to
			runtime.Gosched()
		}
	}
	require.Positive(t, abandoned.Load(), "the test never abandoned a call, so it shows nothing")
	assert.Zero(t, late.Load(), "work started after its call had returned abandoned")
}

// TestGoexitInGuardedWorkIsNoSuccess: runtime.Goexit in guarded work (as
// t.FailNow or require do) neither returned nor panicked; the attempt must not
// read as a success with a zero value.
func TestGoexitInGuardedWorkIsNoSuccess(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := pipeline.New(abandoning(time.Second, time.Hour))
		var pe *pipeline.PanicError
		func() {
			defer func() { pe, _ = recover().(*pipeline.PanicError) }()
			_, _ = p.Execute(t.Context(), func(context.Context) (int, error) {
				runtime.Goexit()
				return 1, nil
			})
		}()
		require.NotNil(t, pe, "Execute must raise a *PanicError, not return")
		assert.ErrorIs(t, pe, pipeline.ErrGoexit)
	})
}

// TestAPanickingHookOnALateReturnIsContained: the late return is reported on
// the goroutine that ran the abandoned work, after its call has returned; a
// panicking hook there must not end the program. It is logged instead.
func TestAPanickingHookOnALateReturnIsContained(t *testing.T) {
	var logged bytes.Buffer
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(slog.New(slog.NewTextHandler(&logged, nil)))
	synctest.Test(t, func(t *testing.T) {
		var released atomic.Int32
		p := pipeline.New(abandoning(time.Millisecond, time.Millisecond)).With(pipeline.Options[int]{
			OnEvent: func(_ context.Context, _ pipeline.Source, e pipeline.Event) {
				if _, ok := e.(pipeline.LateReturn); ok {
					panic("hook down")
				}
			},
			Release: func(int) {
				released.Add(1)
				panic("release down")
			},
		})
		_, err := p.Execute(t.Context(), func(context.Context) (int, error) {
			time.Sleep(time.Second) // ignores its context
			return 1, nil
		})
		require.ErrorIs(t, err, pipeline.ErrAbandoned)
		time.Sleep(time.Second) // virtual: the work returns late
		synctest.Wait()
		assert.Equal(t, int32(1), released.Load())
	})
	assert.Contains(t, logged.String(), "hook down")
	assert.Contains(t, logged.String(), "release down")
}

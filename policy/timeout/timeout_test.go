package timeout_test

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
	"github.com/resilience-go/pipeline/policy/timeout"
)

func TestConformance(t *testing.T) {
	pipelinetest.Run(t, func() pipeline.Policy[string] {
		p, err := timeout.New[string](timeout.Config{Timeout: time.Second})
		require.NoError(t, err)
		return p
	}, "value")
}

// recorder collects events; the hook may be called from several goroutines.
type recorder struct {
	mu     sync.Mutex
	events []pipeline.Event
}

func (r *recorder) hook(_ context.Context, _ pipeline.Source, e pipeline.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

func (r *recorder) all() []pipeline.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]pipeline.Event(nil), r.events...)
}

// run builds spy -> timeout -> fn, where the spy records the verdict the stages
// outside the timeout see.
func run(t *testing.T, cfg timeout.Config, ctx context.Context, fn pipeline.Func[int]) (int, outcome.Verdict, *recorder, error) {
	t.Helper()
	stage, err := timeout.New[int](cfg)
	require.NoError(t, err)
	var verdict outcome.Verdict
	spy := pipeline.PolicyFunc[int](func(ctx context.Context, next pipeline.Next[int]) pipeline.Result[int] {
		r := next.Run(ctx)
		verdict = r.Verdict
		return r
	})
	rec := &recorder{}
	v, err := pipeline.New[int](spy, stage).With(pipeline.Options[int]{OnEvent: rec.hook}).Execute(ctx, fn)
	return v, verdict, rec, err
}

func TestOurDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		var cause error
		_, verdict, rec, err := run(t, timeout.Config{Timeout: 2 * time.Second}, t.Context(), func(ctx context.Context) (int, error) {
			<-ctx.Done()
			cause = context.Cause(ctx)
			return 0, ctx.Err()
		})
		assert.Equal(t, 2*time.Second, time.Since(start), "the work must be cut at exactly the timeout")

		var ours *timeout.Error
		require.ErrorAs(t, cause, &ours, "inside the work, context.Cause must name our timeout")
		assert.Equal(t, 2*time.Second, ours.Duration)

		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.ErrorIs(t, err, outcome.ErrTimeout)
		assert.ErrorAs(t, err, &ours)
		stop, ok := errors.AsType[*pipeline.StopError](err)
		require.True(t, ok, "want a StopError, got %v", err)
		assert.Equal(t, pipeline.Deadline, stop.Reason)
		assert.Equal(t, "timeout", stop.Stage)
		assert.Equal(t, outcome.Transient, verdict.Kind, "our own timeout is transient")
		assert.False(t, verdict.Canceled)

		assert.Contains(t, rec.all(), pipeline.Event(timeout.TimedOut{Timeout: 2 * time.Second}))
	})
}

func TestCallersDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		start := time.Now()
		_, verdict, rec, err := run(t, timeout.Config{Timeout: time.Hour}, ctx, func(ctx context.Context) (int, error) {
			<-ctx.Done()
			return 0, ctx.Err()
		})
		assert.Equal(t, time.Second, time.Since(start))
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.NotErrorIs(t, err, outcome.ErrTimeout, "the caller's deadline is not ours")
		var ours *timeout.Error
		assert.False(t, errors.As(err, &ours), "the caller's deadline is not ours")
		assert.True(t, verdict.Canceled, "the caller's deadline is the caller's cancellation")
		assert.Equal(t, outcome.Permanent, verdict.Kind)
		for _, e := range rec.all() {
			_, isTimeout := e.(timeout.TimedOut)
			assert.False(t, isTimeout, "our timeout did not fire: %v", e)
		}
	})
}

func TestSuccessPassesThrough(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		v, verdict, _, err := run(t, timeout.Config{Timeout: time.Second}, t.Context(), func(ctx context.Context) (int, error) {
			time.Sleep(999 * time.Millisecond) // virtual: the work takes just under the timeout
			return 42, nil
		})
		require.NoError(t, err)
		assert.Equal(t, 42, v)
		assert.Equal(t, outcome.OK, verdict.Kind)
	})
}

func TestWorkThatIgnoresItsContextIsAbandoned(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		before := pipelinetest.Goroutines()
		release := make(chan struct{})
		start := time.Now()
		_, verdict, rec, err := run(t, timeout.Config{Timeout: time.Second, Abandon: true, Grace: 100 * time.Millisecond}, t.Context(),
			func(ctx context.Context) (int, error) {
				<-release // ignores ctx
				return 7, nil
			})
		assert.Equal(t, 1100*time.Millisecond, time.Since(start), "abandon after the timeout plus the grace")
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.ErrorIs(t, err, pipeline.ErrAbandoned)
		assert.ErrorIs(t, err, outcome.ErrTimeout)
		stop, ok := errors.AsType[*pipeline.StopError](err)
		require.True(t, ok, "want a StopError, got %v", err)
		assert.Equal(t, "timeout", stop.Stage)
		assert.Equal(t, pipeline.Deadline, stop.Reason)
		assert.Equal(t, outcome.Transient, verdict.Kind, "our own timeout is transient, abandoned or not")
		events := rec.all()
		assert.Contains(t, events, pipeline.Event(pipeline.Abandoned{Attempt: 1, Grace: 100 * time.Millisecond}))
		assert.Contains(t, events, pipeline.Event(timeout.TimedOut{Timeout: time.Second}))

		synctest.Wait()
		assert.Equal(t, before+1, pipelinetest.Goroutines(), "the abandoned work still runs, on one goroutine")

		time.Sleep(5 * time.Second) // virtual: the work returns long after its call
		close(release)
		synctest.Wait()
		assert.Equal(t, before, pipelinetest.Goroutines(), "the goroutine ends when the work returns")
		assert.Contains(t, rec.all(), pipeline.Event(pipeline.LateReturn{Attempt: 1, After: 5 * time.Second}))
	})
}

func TestCallerCancelsWorkThatIgnoresItsContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancelCause(t.Context())
		why := errors.New("user left")
		time.AfterFunc(time.Second, func() { cancel(why) })
		release := make(chan struct{})
		defer close(release)
		start := time.Now()
		_, verdict, _, err := run(t, timeout.Config{Timeout: time.Hour, Abandon: true}, ctx, func(ctx context.Context) (int, error) {
			<-release
			return 0, nil
		})
		assert.Equal(t, time.Second+timeout.DefaultGrace, time.Since(start))
		assert.ErrorIs(t, err, pipeline.ErrAbandoned)
		assert.ErrorIs(t, err, why, "the caller's cause is reachable")
		assert.ErrorIs(t, err, context.Canceled)
		assert.NotErrorIs(t, err, outcome.ErrTimeout)
		assert.True(t, verdict.Canceled)
	})
}

func TestWorkThatHonoursItsContextIsNotAbandoned(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, _, rec, err := run(t, timeout.Config{Timeout: time.Second, Abandon: true}, t.Context(), func(ctx context.Context) (int, error) {
			<-ctx.Done()
			time.Sleep(timeout.DefaultGrace - time.Millisecond) // slow to notice, but within the grace
			return 0, ctx.Err()
		})
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.NotErrorIs(t, err, pipeline.ErrAbandoned)
		for _, e := range rec.all() {
			assert.NotEqual(t, "abandoned", e.Name())
		}
	})
}

func TestPanicReachesTheCaller(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		stage, err := timeout.New[int](timeout.Config{Timeout: time.Second, Abandon: true})
		require.NoError(t, err)
		p := pipeline.New[int](stage)
		defer func() {
			pe, ok := recover().(*pipeline.PanicError)
			require.True(t, ok, "want a *pipeline.PanicError")
			assert.Equal(t, "boom", pe.Value)
			assert.Contains(t, string(pe.Stack), "timeout_test", "the stack is the panicking goroutine's")
		}()
		_, _ = p.Execute(t.Context(), func(context.Context) (int, error) { panic("boom") })
	})
}

func TestPerAttemptTimeoutIsRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		perAttempt, err := timeout.New[int](timeout.Config{Timeout: time.Second})
		require.NoError(t, err)
		// A minimal retry: run again while the verdict says a retry may help.
		retry := pipeline.PolicyFunc[int](func(ctx context.Context, next pipeline.Next[int]) pipeline.Result[int] {
			r := next.Run(ctx)
			for a := 2; a <= 3 && r.Verdict.Retryable(); a++ {
				r = next.WithAttempt(a).Run(ctx)
			}
			return r
		})
		attempts := 0
		v, err := pipeline.New(retry, pipeline.Policy[int](perAttempt)).Execute(t.Context(), func(ctx context.Context) (int, error) {
			attempts++
			if attempts == 1 {
				<-ctx.Done()
				return 0, ctx.Err()
			}
			return attempts, nil
		})
		require.NoError(t, err)
		assert.Equal(t, 2, v, "the attempt cut by our timeout was retried")
	})
}

func TestByDefaultTheWorkIsTrusted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		before := pipelinetest.Goroutines()
		start := time.Now()
		v, _, rec, err := run(t, timeout.Config{Timeout: time.Second}, t.Context(),
			func(ctx context.Context) (int, error) {
				assert.Equal(t, before, pipelinetest.Goroutines(), "the work runs on the caller's goroutine")
				time.Sleep(5 * time.Second) // ignores ctx: the call waits for it
				return 7, ctx.Err()
			})
		assert.Equal(t, 5*time.Second, time.Since(start), "a timeout that does not guard never abandons the work")
		assert.Equal(t, 7, v)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.NotErrorIs(t, err, pipeline.ErrAbandoned)
		assert.Contains(t, rec.all(), pipeline.Event(timeout.TimedOut{Timeout: time.Second}))
	})
}

func TestGuardedConformance(t *testing.T) {
	pipelinetest.Run(t, func() pipeline.Policy[string] {
		p, err := timeout.New[string](timeout.Config{Timeout: time.Second, Abandon: true})
		require.NoError(t, err)
		return p
	}, "value")
}

func TestConfigValidation(t *testing.T) {
	for _, tc := range []struct {
		cfg  timeout.Config
		want string
	}{
		{timeout.Config{}, "timeout: Config.Timeout must be positive, got 0s"},
		{timeout.Config{Timeout: -time.Second}, "timeout: Config.Timeout must be positive, got -1s"},
		{timeout.Config{Timeout: time.Second, Abandon: true, Grace: -time.Millisecond}, "timeout: Config.Grace must not be negative, got -1ms"},
		{timeout.Config{Timeout: time.Second, Grace: time.Millisecond}, "timeout: Config.Grace is 1ms but Abandon is false: a grace applies only to work the stage may abandon"},
	} {
		_, err := timeout.New[int](tc.cfg)
		assert.EqualError(t, err, tc.want)
	}
}

// A pipeline built outside a synctest bubble works inside one, on its virtual
// time: nothing the stage or the guard keeps between calls belongs to a bubble.
func TestPipelineBuiltOutsideTheBubble(t *testing.T) {
	stage, err := timeout.New[int](timeout.Config{Timeout: time.Second, Abandon: true})
	require.NoError(t, err)
	p := pipeline.New[int](stage)
	for range 2 { // the second bubble reuses what the first pooled
		synctest.Test(t, func(t *testing.T) {
			start := time.Now()
			_, err := p.Execute(t.Context(), func(ctx context.Context) (int, error) {
				<-ctx.Done()
				return 0, ctx.Err()
			})
			assert.ErrorIs(t, err, outcome.ErrTimeout)
			assert.Equal(t, time.Second, time.Since(start))
		})
	}
}

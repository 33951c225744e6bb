package pipelineotel_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/otel"
	"github.com/resilience-go/pipeline/policy/breaker"
	"github.com/resilience-go/pipeline/policy/hedge"
	"github.com/resilience-go/pipeline/policy/retry"
	"github.com/resilience-go/pipeline/standard"
)

// scripted is the standard preset of the scenario: every random choice
// pinned (no retry jitter, no break jitter) and the measured normals off, so
// that each step does exactly one thing.
func scripted() standard.Config {
	return standard.Config{
		Name:           "svc",
		Timeout:        10 * time.Second,
		AttemptTimeout: 2 * time.Second,
		Retry: retry.Config{
			MaxAttempts:  2,
			Backoff:      retry.Constant{Interval: 100 * time.Millisecond, Jitter: retry.NoJitter},
			RefusalPause: -1, // no pause: the refusal returns at once
		},
		Breaker: breaker.Config{
			ConsecutiveFailures: 2,
			BreakDuration:       time.Second,
			BreakJitter:         breaker.JitterNone,
			ProbeSuccesses:      1,
			SlowCalls:           breaker.SlowCalls{Disabled: true},
			Failures:            breaker.Failures{Disabled: true},
			TripWindow:          time.Second, // after a recovery, the pressure that holds the hedge back fades over it
		},
		NoRecovery: true,
		Hedge:      hedge.Config{MinSamples: 2, MinDelay: 20 * time.Millisecond},
	}
}

var errBoom = errors.New("boom")

// TestScenario runs the standard preset, with the telemetry attached by
// NewStandard, through five calls on virtual time, each in a span of its
// own, and checks every data point and every span event they produce:
//
//	A  t=0        succeeds after 5 ms
//	B  t=5ms      fails twice, 5 ms each, 100 ms apart: the second failure
//	              trips the breaker (1 s break) and the retry gives up
//	C  t=115ms    refused by the open breaker, retry after 1 s
//	   (1 s passes)
//	D  t=1.115s   the probe succeeds after 5 ms and closes the breaker
//	   (a trip window, 1 s, passes: the hedge holds back after a recovery)
//	E  t=2.12s    a repeatable call whose first copy hangs; the hedge goes
//	              out at 20 ms and succeeds 5 ms later, and the first copy
//	              is cancelled
func TestScenario(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t)
		p, err := pipelineotel.NewStandard[string](r.tel, scripted())
		require.NoError(t, err)

		call := func(name string, ctx context.Context, fn pipeline.Func[string]) error {
			ctx, span := r.tracer.Start(ctx, name)
			defer span.End()
			_, err := p.Execute(ctx, fn)
			return err
		}
		ok := func(ctx context.Context) (string, error) { return "ok", wait(ctx, 5*time.Millisecond) }
		fail := func(ctx context.Context) (string, error) {
			if err := wait(ctx, 5*time.Millisecond); err != nil {
				return "", err
			}
			return "", errBoom
		}

		require.NoError(t, call("A", context.Background(), ok))
		assert.ErrorIs(t, call("B", context.Background(), fail), pipeline.AttemptsExhausted)
		assert.ErrorIs(t, call("C", context.Background(), ok), pipeline.DependencyUnavailable)
		time.Sleep(time.Second) // the break, on the bubble's clock
		require.NoError(t, call("D", context.Background(), ok))
		time.Sleep(time.Second) // a trip window: the pressure a recovery leaves has faded
		var copies atomic.Int32
		require.NoError(t, call("E", hedge.Repeatable(context.Background()), func(ctx context.Context) (string, error) {
			if copies.Add(1) == 1 {
				return "", wait(ctx, time.Second) // the first copy hangs
			}
			return ok(ctx)
		}))

		assert.Equal(t, []string{
			"resilience.attempt.duration{pipeline.name=svc,verdict=canceled} count=1 sum=0.025", // the hedge's losing copy
			"resilience.attempt.duration{pipeline.name=svc,verdict=ok} count=3 sum=0.015",
			"resilience.attempt.duration{pipeline.name=svc,verdict=transient} count=2 sum=0.01",
			"resilience.breaker.pressure{breaker.name=svc} 0",
			"resilience.breaker.refusals{breaker.name=svc,breaker.state=open} 1",
			"resilience.breaker.state{breaker.name=svc,breaker.state=closed} 1",
			"resilience.breaker.transitions{breaker.cause=break_elapsed,breaker.name=svc,breaker.state=half_open} 1",
			"resilience.breaker.transitions{breaker.cause=consecutive_failures,breaker.name=svc,breaker.state=open} 1",
			"resilience.breaker.transitions{breaker.cause=probes_succeeded,breaker.name=svc,breaker.state=closed} 1",
			"resilience.budget.tokens{budget.name=svc} 29.115",
			"resilience.budget.utilization{budget.name=svc} 0.0295",
			"resilience.call.duration{outcome=attempts_exhausted,pipeline.name=svc} count=1 sum=0.11",
			"resilience.call.duration{outcome=dependency_unavailable,pipeline.name=svc} count=1 sum=0",
			"resilience.call.duration{outcome=ok,pipeline.name=svc} count=3 sum=0.035",
			"resilience.hedge.delay{pipeline.name=svc,stage.kind=hedge,stage.name=svc} count=1 sum=0.02",
			"resilience.hedge.wins{pipeline.name=svc} 1",
			"resilience.refusal.retry_after{pipeline.name=svc,stage.kind=breaker,stage.name=svc,stop.reason=dependency_unavailable} count=1 sum=1",
			"resilience.retry.delay{pipeline.name=svc,stage.kind=retry,stage.name=svc,verdict=transient} count=1 sum=0.1",
			"resilience.stops{pipeline.name=svc,stage.kind=breaker,stage.name=svc,stop.reason=dependency_unavailable} 1",
			"resilience.stops{pipeline.name=svc,stage.kind=retry,stage.name=svc,stop.reason=attempts_exhausted} 1",
		}, r.metrics(t))

		attempt := "attempt attempt=1 duration=0.005 pipeline.name=svc stage.kind=pipeline stage.name= verdict=ok"
		assert.Equal(t, []string{attempt}, r.events("A"))
		assert.Equal(t, []string{
			"attempt attempt=1 duration=0.005 error.message=boom pipeline.name=svc stage.kind=pipeline stage.name= verdict=transient",
			"retry attempt=2 delay=0.1 pipeline.name=svc stage.kind=retry stage.name=svc verdict=transient",
			"attempt attempt=2 duration=0.005 error.message=boom pipeline.name=svc stage.kind=pipeline stage.name= verdict=transient",
			"stop attempts=2 pipeline.name=svc stage.kind=retry stage.name=svc stop.reason=attempts_exhausted stop.stage.kind=retry stop.stage.name=svc",
		}, r.events("B"))
		assert.Equal(t, []string{
			"stop pipeline.name=svc retry_after=1 stage.kind=breaker stage.name=svc stop.reason=dependency_unavailable stop.stage.kind=breaker stop.stage.name=svc",
			"stop pipeline.name=svc retry_after=1 stage.kind=retry stage.name=svc stop.reason=dependency_unavailable stop.stage.kind=breaker stop.stage.name=svc",
		}, r.events("C"))
		assert.Equal(t, []string{attempt}, r.events("D"))
		assert.Equal(t, []string{
			"hedge attempt=1 delay=0.02 hedge.copy=1 pipeline.name=svc stage.kind=hedge stage.name=svc",
			"attempt attempt=1 duration=0.005 hedge.copy=1 pipeline.name=svc stage.kind=pipeline stage.name= verdict=ok",
			"attempt attempt=1 duration=0.025 error.message=context canceled pipeline.name=svc stage.kind=pipeline stage.name= verdict.canceled=true verdict=permanent",
		}, r.events("E"))
	})
}

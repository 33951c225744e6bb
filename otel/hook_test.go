package pipelineotel_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/otel"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/breaker"
	"github.com/resilience-go/pipeline/policy/hedge"
	"github.com/resilience-go/pipeline/policy/timeout"
	"github.com/resilience-go/pipeline/standard"
)

// other is an event of a stage from outside the module.
type other struct{}

func (other) Name() string { return "other" }

// TestHookEdges feeds the hook the events a scenario does not easily raise
// (abandoned work, a shadow breaker, a hedge skipped for a reason of a
// future version, stops of reasons this package does not know, named by
// their words or, past the slots kept for them, unknown, a stop passed on by
// an outer stage) and checks what each records.
func TestHookEdges(t *testing.T) {
	r := newRig(t)
	hook := r.tel.Hook()
	ctx, span := r.tracer.Start(context.Background(), "call")
	own := pipeline.Source{Pipeline: "p", Stage: "pipeline"}
	retrySrc := pipeline.Source{Pipeline: "p", Stage: "retry", Name: "r"}
	hedgeSrc := pipeline.Source{Pipeline: "p", Stage: "hedge", Name: "h"}
	brk := pipeline.Source{Stage: "breaker", Name: "b"}
	at := time.Unix(0, 0)

	hook(ctx, own, pipeline.Abandoned{Attempt: 1, Grace: time.Second})
	hook(ctx, own, pipeline.LateReturn{Attempt: 1, After: time.Minute})
	hook(ctx, hedgeSrc, hedge.Skipped{Attempt: 2, Why: "moon phase"})
	hook(ctx, retrySrc, pipeline.Stopped{Err: &pipeline.StopError{Stage: "retry", Name: "r", Reason: 42}})
	hook(ctx, retrySrc, pipeline.Stopped{Err: &pipeline.StopError{Stage: "retry", Name: "r", Reason: 12}})
	hook(ctx, retrySrc, pipeline.Stopped{Err: &pipeline.StopError{Stage: "breaker", Name: "b", Reason: pipeline.DependencyUnavailable}})
	hook(ctx, retrySrc, pipeline.Stopped{})
	hook(ctx, retrySrc, pipeline.Stopped{Err: &pipeline.StopError{Stage: "retry", Name: "r", Reason: pipeline.BudgetExhausted, RetryAfter: 2 * time.Second}})
	hook(ctx, pipeline.Source{Pipeline: "p", Stage: "timeout", Name: "t"}, timeout.TimedOut{Timeout: time.Second})
	hook(ctx, own, pipeline.AttemptFinished{Attempt: 1, Verdict: outcome.Verdict{Kind: outcome.Throttled, SelfImposed: true}.WithRetryAfter(3 * time.Second)})
	hook(ctx, own, other{})
	hook(context.Background(), brk, breaker.Transition{From: breaker.Closed, To: breaker.Open, Cause: breaker.CauseForced, Break: time.Minute, At: at, Shadow: true})
	hook(context.Background(), brk, breaker.Transition{From: breaker.Open, To: breaker.Isolated, Cause: breaker.CauseIsolate, At: at})
	hook(context.Background(), brk, breaker.Rejection{State: breaker.HalfOpen, RetryAfter: time.Second, At: at, Shadow: true})
	hook(context.Background(), brk, breaker.Rejection{State: breaker.Isolated, At: at})
	span.End()

	assert.Equal(t, []string{
		"resilience.abandoned{pipeline.name=p,stage.kind=pipeline,stage.name=} 1",
		"resilience.attempt.duration{pipeline.name=p,verdict=throttled} count=1 sum=0",
		"resilience.breaker.refusals{breaker.name=b,breaker.shadow=true,breaker.state=half_open} 1",
		"resilience.breaker.refusals{breaker.name=b,breaker.state=isolated} 1",
		"resilience.breaker.transitions{breaker.cause=forced,breaker.name=b,breaker.shadow=true,breaker.state=open} 1",
		"resilience.breaker.transitions{breaker.cause=isolated,breaker.name=b,breaker.state=isolated} 1",
		"resilience.hedge.skips{hedge.skip_reason=other,pipeline.name=p,stage.kind=hedge,stage.name=h} 1",
		"resilience.refusal.retry_after{pipeline.name=p,stage.kind=retry,stage.name=r,stop.reason=budget_exhausted} count=1 sum=2",
		"resilience.stops{pipeline.name=p,stage.kind=retry,stage.name=r,stop.reason=budget_exhausted} 1",
		"resilience.stops{pipeline.name=p,stage.kind=retry,stage.name=r,stop.reason=pipeline.Reason(12)} 1",
		"resilience.stops{pipeline.name=p,stage.kind=retry,stage.name=r,stop.reason=unknown} 1",
		"resilience.timeouts{pipeline.name=p,stage.kind=timeout,stage.name=t} 1",
	}, r.metrics(t))
	assert.Equal(t, []string{
		"abandoned attempt=1 pipeline.name=p stage.kind=pipeline stage.name=",
		"late_return attempt=1 pipeline.name=p stage.kind=pipeline stage.name=",
		"hedge.skipped attempt=2 hedge.skip_reason=other pipeline.name=p stage.kind=hedge stage.name=h",
		"stop pipeline.name=p stage.kind=retry stage.name=r stop.reason=unknown stop.stage.kind=retry stop.stage.name=r",
		"stop pipeline.name=p stage.kind=retry stage.name=r stop.reason=pipeline.Reason(12) stop.stage.kind=retry stop.stage.name=r",
		"stop pipeline.name=p stage.kind=retry stage.name=r stop.reason=dependency_unavailable stop.stage.kind=breaker stop.stage.name=b",
		"stop pipeline.name=p retry_after=2 stage.kind=retry stage.name=r stop.reason=budget_exhausted stop.stage.kind=retry stop.stage.name=r",
		"timeout pipeline.name=p stage.kind=timeout stage.name=t timeout=1",
		"attempt attempt=1 duration=0 pipeline.name=p retry_after=3 stage.kind=pipeline stage.name= verdict.self_imposed=true verdict=throttled",
	}, r.events("call"))
}

// TestSuccessAllocatesNothingMore checks the cost promised for the success
// path: a call through the preset with the metrics attached allocates no
// more than without (the attempt reaches the telemetry through
// Options.OnAttempt, typed), and the hook on an event nothing.
func TestSuccessAllocatesNothingMore(t *testing.T) {
	if testing.Short() {
		t.Skip("measures allocations")
	}
	r := newRig(t)
	bare, err := standard.New[int](standard.Config{})
	assert.NoError(t, err)
	instrumented, err := pipelineotel.NewStandard[int](r.tel, standard.Config{})
	assert.NoError(t, err)
	ctx := context.Background()
	work := func(context.Context) (int, error) { return 1, nil }
	without := testing.AllocsPerRun(200, func() { _, _ = bare.Execute(ctx, work) })
	with := testing.AllocsPerRun(200, func() { _, _ = instrumented.Execute(ctx, work) })
	assert.Equal(t, without, with, "allocations: %v without telemetry, %v with (the attempt reaches it through OnAttempt, not in an interface)", without, with)

	hook := r.tel.Hook()
	src := pipeline.Source{Pipeline: "p", Stage: "pipeline"}
	var e pipeline.Event = pipeline.AttemptFinished{Attempt: 1, Duration: time.Millisecond}
	hook(ctx, src, e) // builds the attribute sets
	assert.Zero(t, testing.AllocsPerRun(200, func() { hook(ctx, src, e) }), "the hook on a success")
}

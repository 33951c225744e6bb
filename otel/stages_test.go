package pipelineotel_test

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/budget"
	"github.com/resilience-go/pipeline/latency"
	"github.com/resilience-go/pipeline/otel"
	"github.com/resilience-go/pipeline/policy/breaker"
	"github.com/resilience-go/pipeline/policy/hedge"
	"github.com/resilience-go/pipeline/policy/retry"
	"github.com/resilience-go/pipeline/policy/timeout"
	"github.com/resilience-go/pipeline/standard"
)

// handBuilt is the card built by hand with both telemetry stages: Calls
// outermost and Attempts directly inside the hedge. Its budget holds one
// token and barely refills, so the second hedge of a call is refused.
func handBuilt(t *testing.T, tel *pipelineotel.Telemetry) *pipeline.Pipeline[string] {
	t.Helper()
	funds, err := budget.New(budget.Config{Name: "h", Capacity: 1, RefillPerSecond: 0.001})
	require.NoError(t, err)
	brk, err := breaker.New(breaker.Config{Name: "h", BreakJitter: breaker.JitterNone})
	require.NoError(t, err)
	est, err := latency.New(latency.Config{Name: "h"})
	require.NoError(t, err)
	p, err := standard.Compose[string](
		pipelineotel.Calls[string](tel),
		timeout.Config{Name: "h", Timeout: 10 * time.Second},
		retry.Config{Name: "h", MaxAttempts: 1, Budget: funds},
		brk,
		hedge.Config{Name: "h", Breaker: brk, Budget: funds, Estimator: est, MinSamples: 1, MinDelay: 20 * time.Millisecond, MaxAttempts: 3},
		pipelineotel.Attempts[string](tel),
		timeout.Config{Name: "h", Timeout: 2 * time.Second},
	)
	require.NoError(t, err)
	assert.Empty(t, p.Check(), "the telemetry stages change nothing Check judges")
	return p.With(pipeline.Options[string]{Name: "h", OnEvent: tel.Hook()})
}

// TestStagesOfAHandBuiltCard runs three calls through the card built by
// hand on virtual time and checks the Calls stage's measurements, the
// Attempts stage's spans (one per attempt and per hedged copy, numbered),
// where each event lands, and the hedge's win and skip:
//
//	warm-up  t=0      succeeds after 5 ms
//	hedged   t=5ms    repeatable: the first copy hangs, the hedge (copy 1)
//	                  goes out at 20 ms and succeeds 30 ms later; the second
//	                  hedge, due at 40 ms, finds the budget empty
//	hung     t=55ms   not repeatable: hangs until the 2 s attempt timeout
func TestStagesOfAHandBuiltCard(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t)
		p := handBuilt(t, r.tel)
		call := func(name string, ctx context.Context, fn pipeline.Func[string]) error {
			ctx, span := r.tracer.Start(ctx, name)
			defer span.End()
			_, err := p.Execute(ctx, fn)
			return err
		}

		require.NoError(t, call("warm-up", context.Background(), func(ctx context.Context) (string, error) {
			return "ok", wait(ctx, 5*time.Millisecond)
		}))
		var copies atomic.Int32
		require.NoError(t, call("hedged", hedge.Repeatable(context.Background()), func(ctx context.Context) (string, error) {
			if copies.Add(1) == 1 {
				return "", wait(ctx, time.Minute)
			}
			return "ok", wait(ctx, 30*time.Millisecond)
		}))
		assert.ErrorIs(t, call("hung", context.Background(), func(ctx context.Context) (string, error) {
			return "", wait(ctx, time.Minute)
		}), pipeline.AttemptsExhausted)

		assert.Equal(t, []string{
			"resilience.attempt.duration{pipeline.name=h,verdict=canceled} count=1 sum=0.05", // the hedge's losing copy
			"resilience.attempt.duration{pipeline.name=h,verdict=ok} count=2 sum=0.035",
			"resilience.attempt.duration{pipeline.name=h,verdict=transient} count=1 sum=2",
			"resilience.call.duration{outcome=attempts_exhausted,pipeline.name=h} count=1 sum=2",
			"resilience.call.duration{outcome=ok,pipeline.name=h} count=2 sum=0.055",
			"resilience.hedge.delay{pipeline.name=h,stage.kind=hedge,stage.name=h} count=1 sum=0.02",
			"resilience.hedge.skips{hedge.skip_reason=budget,pipeline.name=h,stage.kind=hedge,stage.name=h} 1",
			"resilience.hedge.wins{pipeline.name=h} 1",
			"resilience.stops{pipeline.name=h,stage.kind=retry,stage.name=h,stop.reason=attempts_exhausted} 1",
			"resilience.stops{pipeline.name=h,stage.kind=timeout,stage.name=h,stop.reason=deadline} 1",
			"resilience.timeouts{pipeline.name=h,stage.kind=timeout,stage.name=h} 1",
		}, r.metrics(t))

		// The caller's span holds what concerns the call; each attempt's span
		// what concerns the attempt.
		assert.Empty(t, r.events("warm-up"))
		assert.Equal(t, []string{
			"hedge attempt=1 delay=0.02 hedge.copy=1 pipeline.name=h stage.kind=hedge stage.name=h",
			"hedge.skipped attempt=1 hedge.skip_reason=budget pipeline.name=h stage.kind=hedge stage.name=h",
		}, r.events("hedged"))
		assert.Equal(t, []string{
			"stop attempts=1 pipeline.name=h stage.kind=retry stage.name=h stop.reason=attempts_exhausted stop.stage.kind=retry stop.stage.name=h",
		}, r.events("hung"))

		type attemptSpan struct {
			parent       string
			copy, events string
			status       codes.Code
		}
		parents := map[string]string{}
		for _, s := range r.spans.Ended() {
			parents[s.SpanContext().SpanID().String()] = s.Name()
		}
		var got []attemptSpan
		for _, s := range r.spans.Ended() {
			if s.Name() != pipelineotel.SpanAttempt {
				continue
			}
			got = append(got, attemptSpan{
				parent: parents[s.Parent().SpanID().String()],
				copy:   flat(s.Attributes()),
				events: eventsOf(s),
				status: s.Status().Code,
			})
		}
		assert.Equal(t, []attemptSpan{
			{"warm-up", "attempt=1 hedge.copy=0 pipeline.name=h verdict=ok",
				"attempt: attempt=1 duration=0.005 hedge.copy=- pipeline.name=h stage.kind=pipeline stage.name= verdict=ok", codes.Unset},
			{"hedged", "attempt=1 hedge.copy=1 pipeline.name=h verdict=ok",
				"attempt: attempt=1 duration=0.03 hedge.copy=1 pipeline.name=h stage.kind=pipeline stage.name= verdict=ok", codes.Unset},
			{"hedged", "attempt=1 hedge.copy=0 pipeline.name=h verdict.canceled=true verdict=permanent",
				"attempt: attempt=1 duration=0.05 error.message=context canceled hedge.copy=- pipeline.name=h stage.kind=pipeline stage.name= verdict.canceled=true verdict=permanent", codes.Unset},
			{"hung", "attempt=1 hedge.copy=0 pipeline.name=h verdict=transient",
				"attempt: attempt=1 duration=2 error.message=context deadline exceeded hedge.copy=- pipeline.name=h stage.kind=pipeline stage.name= verdict=transient" +
					" | timeout: pipeline.name=h stage.kind=timeout stage.name=h timeout=2" +
					" | stop: pipeline.name=h stage.kind=timeout stage.name=h stop.reason=deadline stop.stage.kind=timeout stop.stage.name=h", codes.Error},
		}, got)
	})
}

// eventsOf writes a span's events as "name: attributes", joined by " | ",
// marking an attempt event without a copy number with hedge.copy=-.
func eventsOf(s sdktrace.ReadOnlySpan) string {
	out := ""
	for i, e := range s.Events() {
		if i > 0 {
			out += " | "
		}
		line := flat(e.Attributes)
		if e.Name == pipelineotel.EventAttempt && !hasKey(e.Attributes, string(pipelineotel.AttrHedgeCopy)) {
			line = flat(append(e.Attributes, pipelineotel.AttrHedgeCopy.String("-")))
		}
		out += e.Name[len("resilience."):] + ": " + line
	}
	return out
}

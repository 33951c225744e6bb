package pipelineotel

import (
	"cmp"
	"context"
	"errors"
	"time"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/health"
	"github.com/resilience-go/pipeline/outcome"
)

// A call ends when Execute returns, and no event says so: the stages report
// attempts, retries and stops, but a call that succeeds at once raises
// nothing but its attempt. So calls are measured by the [Calls] stage,
// outermost: in a pipeline built by hand, in every key's pipeline of a
// [Scopes] (through standard.ScopesConfig.Outer, so that a call made through
// the pipeline its Get returns is measured too), and around the standard
// preset's stages in a [Pipeline]. Being a stage, it hands the reading it
// starts with inward (pipeline.Next.At), so that the stages inside share it.

// CallStage is the stage that measures every call that passes through it.
// Build one with [Calls]; it is immutable and safe for concurrent use.
type CallStage[T any] struct {
	t      *Telemetry
	family string    // labels the calls in place of the pipeline's name, if set (see KeyedHook)
	sets   *callSets // the attribute sets of the calls, when one name labels them all
}

// Calls returns a stage that records the duration of every call that passes
// through it, on the pipeline's clock, in resilience.call.duration, by the
// pipeline's name and the call's outcome. Place it outermost, so that it
// measures the whole call; it allocates nothing.
func Calls[T any](t *Telemetry) *CallStage[T] { return &CallStage[T]{t: t} }

// Stage says that c is a telemetry stage: kind "otel", name "calls".
func (c *CallStage[T]) Stage() pipeline.StageInfo {
	return pipeline.StageInfo{Kind: "otel", Name: "calls"}
}

// Execute runs the call and records it. A call that panics is not recorded.
func (c *CallStage[T]) Execute(ctx context.Context, next pipeline.Next[T]) pipeline.Result[T] {
	start := next.Entered()
	r := next.At(start).Run(ctx)
	d := next.Elapsed() - start
	if c.sets != nil {
		c.t.callDuration.Record(ctx, seconds(d), c.sets.outcome(callOutcome(r.Verdict, r.Err)).rec...)
	} else {
		c.t.ObserveCall(ctx, cmp.Or(c.family, next.Source().Pipeline), d, r.Verdict, r.Err)
	}
	return r
}

// ObserveCall records a call of family's pipelines, an integration's (see
// health.Observer), in resilience.call.duration: d, labelled with family as
// the pipeline's name and with the call's outcome, that of err or, for a
// value v judges a failure, "error".
func (t *Telemetry) ObserveCall(ctx context.Context, family string, d time.Duration, v outcome.Verdict, err error) {
	t.recordCall(ctx, family, d, callOutcome(v, err))
}

// seconds is d in seconds, as d.Seconds() within a rounding, for the
// histograms of every call and attempt: one multiplication, where Seconds
// divides twice.
func seconds(d time.Duration) float64 { return float64(d) * 1e-9 }

// callOutcome is the outcome index of a call that ended with v and err: that
// of err or, for a value v judges a failure, "error".
func callOutcome(v outcome.Verdict, err error) int {
	i := outcomeIndex(err)
	if i == outcomeOKIndex && v.Kind != outcome.OK {
		i = outcomeErrorIndex
	}
	return i
}

// The integrations take a Telemetry as their Observer.
var _ health.Observer = (*Telemetry)(nil)

// recordCall records a call of the pipeline named name that took d and ended
// as outcome i (see outcomeIndex).
func (t *Telemetry) recordCall(ctx context.Context, name string, d time.Duration, i int) {
	t.callDuration.Record(ctx, seconds(d), t.calls.get(name).outcome(i).rec...)
}

// outcomeIndex is the outcome of a call that returned err: ok for nil, the
// reason of a stop, and error for any other error.
func outcomeIndex(err error) int {
	if err == nil {
		return outcomeOKIndex
	}
	stop, ok := err.(*pipeline.StopError)
	if !ok {
		stop, ok = errors.AsType[*pipeline.StopError](err)
	}
	if !ok {
		return outcomeErrorIndex
	}
	return reasonIndex(stop.Reason)
}

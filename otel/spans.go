package pipelineotel

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/adaptive"
	"github.com/resilience-go/pipeline/policy/fallback"
	"github.com/resilience-go/pipeline/policy/fault"
	"github.com/resilience-go/pipeline/policy/hedge"
	"github.com/resilience-go/pipeline/policy/retry"
	"github.com/resilience-go/pipeline/policy/timeout"
)

// spanEvent adds e to span, the recording span of e's context: the caller's,
// a hedged copy's (the caller's too, unless an [Attempts] stage started one
// for the copy) or an attempt's. Span events may carry what metrics may not,
// such as an attempt's error text: they belong to one call.
func (t *Telemetry) spanEvent(ctx context.Context, span trace.Span, src pipeline.Source, e pipeline.Event) {
	kvs := make([]attribute.KeyValue, 0, 8)
	kvs = append(kvs, AttrPipeline.String(src.Pipeline), AttrStageKind.String(src.Stage), AttrStageName.String(src.Name))
	var name string
	switch e := e.(type) {
	case pipeline.AttemptFinished:
		name = EventAttempt
		kvs = append(kvs, AttrAttempt.Int(e.Attempt))
		if c, ok := hedge.CopyOf(ctx); ok && c > 0 {
			kvs = append(kvs, AttrHedgeCopy.Int(c))
		}
		kvs = append(kvs, verdictKVs(e.Verdict)...)
		kvs = append(kvs, AttrDuration.Float64(e.Duration.Seconds()))
		if e.Err != nil {
			kvs = append(kvs, attribute.String("error.message", e.Err.Error()))
		}
	case retry.Scheduled:
		name = EventRetry
		kvs = append(kvs, AttrAttempt.Int(e.Attempt), AttrDelay.Float64(e.Delay.Seconds()))
		kvs = append(kvs, verdictKVs(e.Verdict)...)
	case hedge.Hedged:
		name = EventHedge
		kvs = append(kvs, AttrAttempt.Int(e.Attempt), AttrHedgeCopy.Int(e.Hedge), AttrDelay.Float64(e.Delay.Seconds()))
	case hedge.Skipped:
		name = EventSkip
		kvs = append(kvs, AttrAttempt.Int(e.Attempt), AttrHedgeSkipReason.String(skips[skipIndex(e.Why)]))
	case pipeline.Stopped:
		if e.Err == nil {
			return
		}
		name = EventStop
		kvs = append(kvs,
			AttrStopReason.String(reasonName(reasonIndex(e.Err.Reason))),
			attribute.String("resilience.stop.stage.kind", e.Err.Stage),
			attribute.String("resilience.stop.stage.name", e.Err.Name),
		)
		if e.Err.RetryAfter > 0 {
			kvs = append(kvs, AttrRetryAfter.Float64(e.Err.RetryAfter.Seconds()))
		}
		if e.Err.Attempts > 0 {
			kvs = append(kvs, attribute.Int("resilience.attempts", e.Err.Attempts))
		}
	case timeout.TimedOut:
		name = EventTimeout
		kvs = append(kvs, attribute.Float64("resilience.timeout", e.Timeout.Seconds()))
		if e.Measured != 0 { // a ceiling's cut
			kvs = append(kvs, attribute.Float64("resilience.ceiling.measured", e.Measured.Seconds()))
		}
	case pipeline.Abandoned:
		name = EventAbandon
		kvs = append(kvs, AttrAttempt.Int(e.Attempt))
	case pipeline.LateReturn:
		name = EventLate
		kvs = append(kvs, AttrAttempt.Int(e.Attempt))
	case pipeline.Waited:
		name = EventWait
		kvs = append(kvs, AttrWait.Float64(e.Wait.Seconds()))
		if e.Queued != 0 || e.Limit != 0 { // a gate that says (an adaptive limit)
			kvs = append(kvs, attribute.Int("resilience.queued", e.Queued), attribute.Int("resilience.limit", e.Limit))
		}
	case adaptive.Revision:
		name = EventRevision
		kvs = append(kvs, AttrAdaptiveWhy.String(whys[whyIndex(e.Why)]),
			attribute.Int("resilience.adaptive.from", e.From), attribute.Int("resilience.adaptive.to", e.To),
			attribute.Float64("resilience.adaptive.recent", e.Recent.Seconds()),
			attribute.Float64("resilience.adaptive.baseline", e.Baseline.Seconds()))
	case fallback.Executed:
		name = EventFallback
		kvs = append(kvs, AttrFallbackReason.String(outcomeName(fallbackIndex(e))))
		if e.FuncErr != nil {
			kvs = append(kvs, AttrFallbackFailed.Bool(true), attribute.String("error.message", e.FuncErr.Error()))
		}
	case fault.Injected:
		name = EventFault
		kvs = append(kvs, AttrAttempt.Int(e.Attempt), AttrFaultKind.String(faultKinds[faultIndex(e.Kind)]))
		if e.Kind == fault.Latency {
			kvs = append(kvs, AttrDelay.Float64(e.Delay.Seconds()))
		}
	default:
		return
	}
	span.AddEvent(name, trace.WithAttributes(kvs...))
}

// verdictKVs are a verdict's attributes: its kind and, when set, the
// dependency's retry-after hint and the self-imposed and canceled marks.
func verdictKVs(v outcome.Verdict) []attribute.KeyValue {
	kvs := []attribute.KeyValue{AttrVerdict.String(verdicts[verdictIndex(v.Kind)])}
	if d := v.RetryAfter(); d > 0 {
		kvs = append(kvs, AttrRetryAfter.Float64(d.Seconds()))
	}
	if v.SelfImposed {
		kvs = append(kvs, attribute.Bool("resilience.verdict.self_imposed", true))
	}
	if v.Canceled {
		kvs = append(kvs, attribute.Bool("resilience.verdict.canceled", true))
	}
	return kvs
}

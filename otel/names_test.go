package pipelineotel_test

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/otel"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/breaker"
	"github.com/resilience-go/pipeline/policy/hedge"
)

// instrument is what a meter was asked to create.
type instrument struct{ kind, name, unit string }

// recordingMeter is a no-op meter that notes every instrument created on it.
type recordingMeter struct {
	noop.Meter
	made *[]instrument
}

func (m recordingMeter) Float64Histogram(name string, opts ...metric.Float64HistogramOption) (metric.Float64Histogram, error) {
	*m.made = append(*m.made, instrument{"histogram", name, metric.NewFloat64HistogramConfig(opts...).Unit()})
	return m.Meter.Float64Histogram(name, opts...)
}

func (m recordingMeter) Int64Counter(name string, opts ...metric.Int64CounterOption) (metric.Int64Counter, error) {
	*m.made = append(*m.made, instrument{"counter", name, metric.NewInt64CounterConfig(opts...).Unit()})
	return m.Meter.Int64Counter(name, opts...)
}

func (m recordingMeter) Int64ObservableGauge(name string, opts ...metric.Int64ObservableGaugeOption) (metric.Int64ObservableGauge, error) {
	*m.made = append(*m.made, instrument{"gauge", name, metric.NewInt64ObservableGaugeConfig(opts...).Unit()})
	return m.Meter.Int64ObservableGauge(name, opts...)
}

func (m recordingMeter) Float64ObservableGauge(name string, opts ...metric.Float64ObservableGaugeOption) (metric.Float64ObservableGauge, error) {
	*m.made = append(*m.made, instrument{"gauge", name, metric.NewFloat64ObservableGaugeConfig(opts...).Unit()})
	return m.Meter.Float64ObservableGauge(name, opts...)
}

// recordingProvider hands out recording meters and notes their scope.
type recordingProvider struct {
	noop.MeterProvider
	scopes *[]string
	made   *[]instrument
}

func (p recordingProvider) Meter(name string, _ ...metric.MeterOption) metric.Meter {
	*p.scopes = append(*p.scopes, name)
	return recordingMeter{made: p.made}
}

// TestInstrumentNamesAreStable is the golden list of every instrument, its
// kind and its unit: renaming one breaks the dashboards and alerts built on
// it, so it must be a deliberate change of this list and of
// docs/telemetry.md, and a note in the release.
func TestInstrumentNamesAreStable(t *testing.T) {
	var scopes []string
	var made []instrument
	_, err := pipelineotel.New(pipelineotel.Config{MeterProvider: recordingProvider{scopes: &scopes, made: &made}})
	require.NoError(t, err)
	assert.Equal(t, []string{"github.com/resilience-go/pipeline/otel"}, scopes)
	slices.SortFunc(made, func(a, b instrument) int { return strings.Compare(a.name, b.name) })
	assert.Equal(t, []instrument{
		{"counter", "resilience.abandoned", "{attempt}"},
		{"counter", "resilience.adaptive.revisions", "{revision}"},
		{"histogram", "resilience.admission.wait", "s"},
		{"histogram", "resilience.attempt.duration", "s"},
		{"gauge", "resilience.breaker.pressure", "1"},
		{"counter", "resilience.breaker.refusals", "{attempt}"},
		{"gauge", "resilience.breaker.state", "{breaker}"},
		{"counter", "resilience.breaker.transitions", "{transition}"},
		{"gauge", "resilience.budget.tokens", "{token}"},
		{"gauge", "resilience.budget.utilization", "1"},
		{"histogram", "resilience.call.duration", "s"},
		{"gauge", "resilience.ceiling.limit", "s"},
		{"gauge", "resilience.concurrency.in_flight", "{call}"},
		{"gauge", "resilience.concurrency.limit", "{call}"},
		{"gauge", "resilience.concurrency.queued", "{call}"},
		{"counter", "resilience.fallbacks", "{fallback}"},
		{"counter", "resilience.faults", "{fault}"},
		{"histogram", "resilience.hedge.delay", "s"},
		{"counter", "resilience.hedge.skips", "{hedge}"},
		{"counter", "resilience.hedge.wins", "{hedge}"},
		{"gauge", "resilience.ratelimit.tokens", "{token}"},
		{"histogram", "resilience.refusal.retry_after", "s"},
		{"histogram", "resilience.retry.delay", "s"},
		{"counter", "resilience.stops", "{stop}"},
		{"counter", "resilience.timeouts", "{timeout}"},
	}, made)
}

// TestAttributeKeysAreStable is the golden list of every attribute key and
// span event name.
func TestAttributeKeysAreStable(t *testing.T) {
	assert.Equal(t, []string{
		"resilience.pipeline.name", "resilience.stage.kind", "resilience.stage.name",
		"resilience.verdict", "resilience.outcome", "resilience.stop.reason",
		"resilience.breaker.name", "resilience.breaker.state", "resilience.breaker.cause", "resilience.breaker.shadow",
		"resilience.budget.name", "resilience.hedge.skip_reason",
		"resilience.attempt", "resilience.hedge.copy", "resilience.delay", "resilience.duration", "resilience.retry_after",
		"resilience.adaptive.why", "resilience.fallback.reason", "resilience.fallback.failed", "resilience.fault.kind", "resilience.wait",
	}, []string{
		string(pipelineotel.AttrPipeline), string(pipelineotel.AttrStageKind), string(pipelineotel.AttrStageName),
		string(pipelineotel.AttrVerdict), string(pipelineotel.AttrOutcome), string(pipelineotel.AttrStopReason),
		string(pipelineotel.AttrBreaker), string(pipelineotel.AttrBreakerState), string(pipelineotel.AttrBreakerCause), string(pipelineotel.AttrBreakerShadow),
		string(pipelineotel.AttrBudget), string(pipelineotel.AttrHedgeSkipReason),
		string(pipelineotel.AttrAttempt), string(pipelineotel.AttrHedgeCopy), string(pipelineotel.AttrDelay), string(pipelineotel.AttrDuration), string(pipelineotel.AttrRetryAfter),
		string(pipelineotel.AttrAdaptiveWhy), string(pipelineotel.AttrFallbackReason), string(pipelineotel.AttrFallbackFailed), string(pipelineotel.AttrFaultKind), string(pipelineotel.AttrWait),
	})
	assert.Equal(t, []string{
		"resilience.attempt", "resilience.retry", "resilience.hedge", "resilience.hedge.skipped", "resilience.stop",
		"resilience.timeout", "resilience.abandoned", "resilience.late_return", "resilience.attempt",
		"resilience.wait", "resilience.adaptive.revision", "resilience.fallback", "resilience.fault",
	}, []string{
		pipelineotel.EventAttempt, pipelineotel.EventRetry, pipelineotel.EventHedge, pipelineotel.EventSkip, pipelineotel.EventStop,
		pipelineotel.EventTimeout, pipelineotel.EventAbandon, pipelineotel.EventLate, pipelineotel.SpanAttempt,
		pipelineotel.EventWait, pipelineotel.EventRevision, pipelineotel.EventFallback, pipelineotel.EventFault,
	})
}

// TestEveryValueIsDocumented raises a transition of every breaker cause and
// a skip of every hedge reason, and finds each attribute value recorded in
// the table of values of docs/telemetry.md: a cause or reason added to the
// breaker or the hedge must be added there (trickle_succeeded and extra
// were missing).
func TestEveryValueIsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../docs/telemetry.md")
	require.NoError(t, err)
	row := func(attr string) string {
		for line := range strings.Lines(string(doc)) {
			if strings.HasPrefix(line, "| `"+attr+"` |") {
				return line
			}
		}
		t.Fatalf("docs/telemetry.md has no row for %s", attr)
		return ""
	}
	r := newRig(t)
	hook := r.tel.Hook()
	ctx := context.Background()
	for c := breaker.CauseConsecutiveFailures; c <= breaker.CauseTrickle; c++ {
		hook(ctx, pipeline.Source{Stage: "breaker", Name: "b"}, breaker.Transition{From: breaker.Closed, To: breaker.Open, Cause: c})
	}
	for _, why := range []string{"breaker", "budget", "extra"} {
		hook(ctx, pipeline.Source{Pipeline: "p", Stage: "hedge", Name: "p"}, hedge.Skipped{Attempt: 1, Why: why})
	}
	causes, reasons := 0, 0
	for _, line := range r.metrics(t) {
		for _, kv := range strings.FieldsFunc(line, func(r rune) bool { return r == '{' || r == '}' || r == ',' || r == ' ' }) {
			switch k, v, _ := strings.Cut(kv, "="); k {
			case "breaker.cause":
				causes++
				assert.Contains(t, row("resilience.breaker.cause"), "`"+v+"`")
			case "hedge.skip_reason":
				reasons++
				assert.Contains(t, row("resilience.hedge.skip_reason"), "`"+v+"`")
				assert.NotEqual(t, "other", v)
			}
		}
	}
	assert.Equal(t, int(breaker.CauseTrickle), causes, "one series per cause")
	assert.Equal(t, 3, reasons)
}

// TestACanceledAttemptIsNotAFailure: a hedge's losing copy (an attempt its
// caller ended) is recorded as canceled, not among the permanent failures
// (it was, before).
func TestACanceledAttemptIsNotAFailure(t *testing.T) {
	r := newRig(t)
	hook := r.tel.Hook()
	src := pipeline.Source{Pipeline: "p"}
	hook(context.Background(), src, pipeline.AttemptFinished{Attempt: 1, Verdict: outcome.Verdict{Kind: outcome.Permanent, Canceled: true}})
	hook(context.Background(), src, pipeline.AttemptFinished{Attempt: 1, Verdict: outcome.Verdict{Kind: outcome.Permanent}})
	lines := r.metrics(t)
	assert.Contains(t, lines, "resilience.attempt.duration{pipeline.name=p,verdict=canceled} count=1 sum=0")
	assert.Contains(t, lines, "resilience.attempt.duration{pipeline.name=p,verdict=permanent} count=1 sum=0")
}

package pipelineotel

import (
	"cmp"
	"context"
	"errors"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/policy/adaptive"
	"github.com/resilience-go/pipeline/policy/breaker"
	"github.com/resilience-go/pipeline/policy/fallback"
	"github.com/resilience-go/pipeline/policy/fault"
	"github.com/resilience-go/pipeline/policy/hedge"
	"github.com/resilience-go/pipeline/policy/retry"
	"github.com/resilience-go/pipeline/policy/timeout"
)

// Config configures a [Telemetry]. The zero value uses the global providers
// of package otel (otel.GetMeterProvider, otel.GetTracerProvider).
type Config struct {
	// MeterProvider provides the meter of every instrument. Nil means
	// otel.GetMeterProvider().
	MeterProvider metric.MeterProvider
	// TracerProvider provides the tracer of the spans the [Attempts] stage
	// starts; span events go to whatever span is in the event's context,
	// whichever provider started it. Nil means otel.GetTracerProvider().
	TracerProvider trace.TracerProvider
}

// Telemetry turns the events of pipelines and breakers into OpenTelemetry
// metrics and span events, and observes the state of breakers and budgets.
// Build one with [New] per meter provider and share it among every pipeline:
// it is safe for concurrent use. Attach it with [Telemetry.Hook] (any
// pipeline or breaker), [NewStandard] and [NewScopes] (the standard preset,
// in one call), the Observe methods (observable state of breakers,
// budgets, limiters and ceilings), and the [Calls] and [Attempts] stages
// (hand-built pipelines).
type Telemetry struct {
	tracer trace.Tracer

	callDuration      metric.Float64Histogram
	attemptDuration   metric.Float64Histogram
	stops             metric.Int64Counter
	refusalRetryAfter metric.Float64Histogram
	retryDelay        metric.Float64Histogram
	hedgeDelay        metric.Float64Histogram
	hedgeSkips        metric.Int64Counter
	hedgeWins         metric.Int64Counter
	timeouts          metric.Int64Counter
	abandoned         metric.Int64Counter
	transitions       metric.Int64Counter
	refusals          metric.Int64Counter
	admissionWait     metric.Float64Histogram
	revisions         metric.Int64Counter
	fallbacks         metric.Int64Counter
	faults            metric.Int64Counter

	sources cache[pipeline.Source, sourceSets] // attribute sets by event source
	calls   cache[string, callSets]            // attribute sets by pipeline name alone
	watched watchlist                          // breakers and budgets to observe
}

// durationBuckets are the bucket boundaries of every histogram of seconds:
// those OpenTelemetry's semantic conventions give http.client.request.duration,
// and 30 s, the longest retry delay and the default whole-call timeout.
var durationBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 30}

// New returns a Telemetry whose instruments are created on cfg's meter
// provider, or the error the provider returned for one of them (joined).
func New(cfg Config) (*Telemetry, error) {
	mp := cfg.MeterProvider
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	tp := cfg.TracerProvider
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	meter := mp.Meter(ScopeName)
	t := &Telemetry{tracer: tp.Tracer(ScopeName)}
	t.sources.build = newSourceSets
	t.calls.build = newCallSets
	var errs []error
	seconds := func(name, desc string) metric.Float64Histogram {
		h, err := meter.Float64Histogram(name, metric.WithUnit("s"), metric.WithDescription(desc), metric.WithExplicitBucketBoundaries(durationBuckets...))
		errs = append(errs, err)
		return h
	}
	count := func(name, unit, desc string) metric.Int64Counter {
		c, err := meter.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		return c
	}
	t.callDuration = seconds(MetricCallDuration, "Duration of calls through a pipeline, from Execute to its return.")
	t.attemptDuration = seconds(MetricAttemptDuration, "Duration of attempts of the work a pipeline runs.")
	t.stops = count(MetricStops, "{stop}", "Calls and attempts a stage refused or gave up on, counted at the stage that stopped them.")
	t.refusalRetryAfter = seconds(MetricRefusalRetryAfter, "Retry-after hint of refusals by a pipeline's own stages (an open breaker, an empty budget, a rate or concurrency limit).")
	t.retryDelay = seconds(MetricRetryDelay, "Wait before each retry.")
	t.hedgeDelay = seconds(MetricHedgeDelay, "Delay after which each hedge was sent.")
	t.hedgeSkips = count(MetricHedgeSkips, "{hedge}", "Hedges that were due and not sent.")
	t.hedgeWins = count(MetricHedgeWins, "{hedge}", "Hedges whose result the hedge stage kept.")
	t.timeouts = count(MetricTimeouts, "{timeout}", "Deadlines of timeout and ceiling stages that passed before the work inside succeeded.")
	t.abandoned = count(MetricAbandoned, "{attempt}", "Attempts whose work ignored its context past a timeout's grace.")
	t.transitions = count(MetricBreakerTransitions, "{transition}", "State changes of circuit breakers.")
	t.refusals = count(MetricBreakerRefusals, "{attempt}", "Attempts a circuit breaker refused, or in shadow mode would have refused.")
	t.admissionWait = seconds(MetricAdmissionWait, "Wait of calls a rate limiter, bulkhead or adaptive limit let in after a wait.")
	t.revisions = count(MetricAdaptiveRevisions, "{revision}", "Revisions of adaptive concurrency limits that moved the limit or its baseline.")
	t.fallbacks = count(MetricFallbacks, "{fallback}", "Results a fallback stage replaced, or failed to replace.")
	t.faults = count(MetricFaults, "{fault}", "Faults injected by fault-injection stages.")
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if err := t.watched.register(meter); err != nil {
		return nil, err
	}
	return t, nil
}

// Hook returns the event hook that records every event of the pipelines and
// breakers it is given to: set it as pipeline.Options.OnEvent and as
// breaker.Config.OnEvent (combined with hooks of your own by
// pipeline.Hooks). For each event it records the metrics of the event's kind
// and, if the span in the event's context is recording, adds a span event.
// It allocates nothing for the events of a call that succeeds.
func (t *Telemetry) Hook() func(context.Context, pipeline.Source, pipeline.Event) {
	return t.observe
}

// KeyedHook returns the event hook for pipelines and breakers made per key
// (per host, per tenant, per target) of the family named family, as
// [NewScopes] attaches to every key's pipeline. It records what [Hook] does,
// but the counters and histograms are labelled with family in place of the
// key, as the pipeline's name and as the name of every stage named after
// the pipeline (the preset's, and the key's breaker): with the default
// cumulative temporality an SDK keeps every series a synchronous instrument
// ever recorded, so labels from keys that come and go would grow without
// bound and push the live keys' series into the SDK's overflow. Span events
// keep the key, since they belong to one call; the observable gauges
// (ObserveScopes) keep it too, since they report only the keys held at each
// collection.
func (t *Telemetry) KeyedHook(family string) func(context.Context, pipeline.Source, pipeline.Event) {
	return func(ctx context.Context, src pipeline.Source, e pipeline.Event) {
		t.record(ctx, src, keyed(src, family), e)
		if span := trace.SpanFromContext(ctx); span.IsRecording() {
			t.spanEvent(ctx, span, src, e)
		}
	}
}

// keyed is src as a keyed pipeline's metrics label it: the family in place
// of the key. The key is the pipeline's name, or, on the events of a keyed
// breaker, which carry no pipeline, the breaker's.
func keyed(src pipeline.Source, family string) pipeline.Source {
	key := cmp.Or(src.Pipeline, src.Name)
	if src.Name == key {
		src.Name = family
	}
	if src.Pipeline != "" {
		src.Pipeline = family
	}
	return src
}

// attempts is the hook of the attempts of the pipeline named name
// (pipeline.Options.OnAttempt): it records them as the hook records an
// AttemptFinished, with the attribute sets of name looked up once, and
// without the allocation of an event in an interface.
func (t *Telemetry) attempts(name string) func(context.Context, pipeline.Source, pipeline.AttemptFinished) {
	sets := t.calls.get(name)
	return func(ctx context.Context, src pipeline.Source, e pipeline.AttemptFinished) {
		s := sets
		if src.Pipeline != name {
			s = t.calls.get(src.Pipeline)
		}
		span := trace.SpanFromContext(ctx)
		at := ctx
		if !span.SpanContext().IsValid() {
			at = context.Background() // no trace for an exemplar: spare the SDK looking it up again
		}
		t.attemptDuration.Record(at, seconds(e.Duration), s.attempt(e.Verdict).rec...)
		if span.IsRecording() {
			t.spanEvent(ctx, span, src, e)
		}
	}
}

// observe is the hook.
func (t *Telemetry) observe(ctx context.Context, src pipeline.Source, e pipeline.Event) {
	t.record(ctx, src, src, e)
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		t.spanEvent(ctx, span, src, e)
	}
}

// record records the metrics of e, raised by src, labelled as the source as.
func (t *Telemetry) record(ctx context.Context, src, as pipeline.Source, e pipeline.Event) {
	switch e := e.(type) {
	case pipeline.AttemptFinished:
		t.attemptDuration.Record(ctx, seconds(e.Duration), t.calls.get(as.Pipeline).attempt(e.Verdict).rec...)
	case pipeline.Stopped:
		if e.Err == nil || e.Err.Stage != src.Stage || e.Err.Name != src.Name {
			break // a stop an outer stage passes on was counted where it was made
		}
		set := t.sources.get(as).stop(e.Err.Reason)
		t.stops.Add(ctx, 1, set.add...)
		switch e.Err.Reason {
		case pipeline.DependencyUnavailable, pipeline.BudgetExhausted, pipeline.RateLimited, pipeline.ConcurrencyLimited:
			t.refusalRetryAfter.Record(ctx, e.Err.RetryAfter.Seconds(), set.rec...)
		}
	case retry.Scheduled:
		t.retryDelay.Record(ctx, e.Delay.Seconds(), t.sources.get(as).retry(e.Verdict.Kind).rec...)
	case hedge.Hedged:
		t.hedgeDelay.Record(ctx, e.Delay.Seconds(), t.sources.get(as).stage().rec...)
	case hedge.Won:
		t.hedgeWins.Add(ctx, 1, t.calls.get(as.Pipeline).win().add...)
	case hedge.Skipped:
		t.hedgeSkips.Add(ctx, 1, t.sources.get(as).skip(e.Why).add...)
	case timeout.TimedOut:
		t.timeouts.Add(ctx, 1, t.sources.get(as).stage().add...)
	case pipeline.Abandoned:
		t.abandoned.Add(ctx, 1, t.sources.get(as).stage().add...)
	case breaker.Transition:
		t.transitions.Add(ctx, 1, metric.WithAttributeSet(transitionSet(as, e)))
	case breaker.Rejection:
		t.refusals.Add(ctx, 1, t.sources.get(as).refusal(e.State, e.Shadow).add...)
	case pipeline.Waited:
		t.admissionWait.Record(ctx, e.Wait.Seconds(), t.sources.get(as).stage().rec...)
	case adaptive.Revision:
		t.revisions.Add(ctx, 1, t.sources.get(as).revision(e.Why).add...)
	case fallback.Executed:
		t.fallbacks.Add(ctx, 1, t.sources.get(as).fallback(fallbackIndex(e), e.FuncErr != nil).add...)
	case fault.Injected:
		t.faults.Add(ctx, 1, t.sources.get(as).fault(e.Kind).add...)
	}
}

package pipelineotel

import (
	"errors"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/policy/adaptive"
	"github.com/resilience-go/pipeline/policy/bulkhead"
	"github.com/resilience-go/pipeline/policy/ceiling"
	"github.com/resilience-go/pipeline/policy/ratelimit"
)

// limitGauges are the observable gauges of the stages whose state moves
// between calls: how full a bulkhead or an adaptive limit is, and where its
// limit stands; how many tokens a rate limiter holds; where a ceiling is.
// Each is labelled with the stage's kind and name, as the stops and waits of
// the stage are, so that a query can put a limit beside its refusals. They
// carry no pipeline name: a limiter is shared by every pipeline that calls
// its dependency.
type limitGauges struct {
	limit, inFlight, queued metric.Int64ObservableGauge
	rateTokens, ceiling     metric.Float64ObservableGauge
}

// register creates the gauges on meter and returns them, for the callback.
func (g *limitGauges) register(meter metric.Meter) ([]metric.Observable, error) {
	var errs [5]error
	g.limit, errs[0] = meter.Int64ObservableGauge(MetricConcurrencyLimit, metric.WithUnit("{call}"),
		metric.WithDescription("How many calls each bulkhead or adaptive limit lets in at once."))
	g.inFlight, errs[1] = meter.Int64ObservableGauge(MetricConcurrencyInFlight, metric.WithUnit("{call}"),
		metric.WithDescription("How many calls are inside each bulkhead or adaptive limit."))
	g.queued, errs[2] = meter.Int64ObservableGauge(MetricConcurrencyQueued, metric.WithUnit("{call}"),
		metric.WithDescription("How many calls wait for a slot of each bulkhead or adaptive limit."))
	g.rateTokens, errs[3] = meter.Float64ObservableGauge(MetricRateLimitTokens, metric.WithUnit("{token}"),
		metric.WithDescription("How many calls each rate limiter would let in at once; negative while calls wait for tokens promised to them."))
	g.ceiling, errs[4] = meter.Float64ObservableGauge(MetricCeilingLimit, metric.WithUnit("s"),
		metric.WithDescription("The current ceiling of each armed ceiling stage."))
	return []metric.Observable{g.limit, g.inFlight, g.queued, g.rateTokens, g.ceiling}, errors.Join(errs[:]...)
}

// stageSet is the attribute set of a stage's gauges: its kind and name,
// fixed when it was built, so the set is built once per observation.
func stageSet(info pipeline.StageInfo) metric.ObserveOption {
	return metric.WithAttributeSet(attribute.NewSet(AttrStageKind.String(info.Kind), AttrStageName.String(info.Name)))
}

// concurrency reports a limit, the calls inside and the calls waiting.
func (g *limitGauges) concurrency(o metric.Observer, set metric.ObserveOption, limit, inFlight, queued int) {
	o.ObserveInt64(g.limit, int64(limit), set)
	o.ObserveInt64(g.inFlight, int64(inFlight), set)
	o.ObserveInt64(g.queued, int64(queued), set)
}

// ObserveBulkhead reports b's limit, the calls inside it and the calls in
// its queue in the observable gauges resilience.concurrency.limit,
// resilience.concurrency.in_flight and resilience.concurrency.queued,
// labelled with its kind (bulkhead) and name, at every collection until
// stop is called. A nil b is not reported. Give every observed limiter its
// own name: two of one name report one series.
func (t *Telemetry) ObserveBulkhead(b *bulkhead.Bulkhead) (stop func()) {
	if b == nil {
		return func() {}
	}
	set := stageSet(b.Stage())
	return t.watched.add(func(o metric.Observer) {
		t.watched.limits.concurrency(o, set, b.Limit(), b.InFlight(), b.Queued())
	})
}

// ObserveAdaptiveLimiter reports l's limit, the calls inside it and the
// calls in its queue, read together (adaptive.Limiter.Snapshot), in the same
// gauges as ObserveBulkhead, labelled with its kind (adaptive) and name, at
// every collection until stop is called: the gauge of the limit shows every
// move the revisions made, resilience.adaptive.revisions why they made it. A
// nil l is not reported.
func (t *Telemetry) ObserveAdaptiveLimiter(l *adaptive.Limiter) (stop func()) {
	if l == nil {
		return func() {}
	}
	set := stageSet(l.Stage())
	return t.watched.add(func(o metric.Observer) {
		s := l.Snapshot()
		t.watched.limits.concurrency(o, set, s.Limit, s.InFlight, s.Queued)
	})
}

// ObserveRateLimiter reports l's tokens (ratelimit.Limiter.Tokens) in the
// observable gauge resilience.ratelimit.tokens, labelled with its kind
// (ratelimit) and name, at every collection until stop is called: near 0,
// the limiter is letting calls through as fast as it may, below 0 calls
// queue for tokens. A nil l is not reported.
func (t *Telemetry) ObserveRateLimiter(l *ratelimit.Limiter) (stop func()) {
	if l == nil {
		return func() {}
	}
	set := stageSet(l.Stage())
	return t.watched.add(func(o metric.Observer) {
		o.ObserveFloat64(t.watched.limits.rateTokens, l.Tokens(), set)
	})
}

// ObserveCeiling reports the ceiling c would give an attempt starting now
// (ceiling.Policy.Limit, on its estimator's clock) in the observable gauge
// resilience.ceiling.limit, in seconds, labelled with its kind (ceiling) and
// name, at every collection until stop is called; a ceiling not yet armed
// (too few samples) is not reported. Reading it changes nothing. A nil c is
// not reported.
func ObserveCeiling[T any](t *Telemetry, c *ceiling.Policy[T]) (stop func()) {
	if c == nil {
		return func() {}
	}
	set := stageSet(c.Stage())
	return t.watched.add(func(o metric.Observer) {
		if limit, armed := c.Limit(c.Estimator().Now()); armed {
			o.ObserveFloat64(t.watched.limits.ceiling, limit.Seconds(), set)
		}
	})
}

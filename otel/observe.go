package pipelineotel

import (
	"context"
	"errors"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/resilience-go/pipeline/budget"
	"github.com/resilience-go/pipeline/health"
	"github.com/resilience-go/pipeline/policy/breaker"
	"github.com/resilience-go/pipeline/standard"
)

// watchlist is what the observable gauges read when the meter provider
// collects: every breaker, budget, limiter and ceiling observed, each
// through a function that reports it (a Scopes lists its keys anew at each
// collection).
type watchlist struct {
	mu   sync.Mutex // guards seq and each
	seq  uint64
	each map[uint64]func(metric.Observer)

	state                         metric.Int64ObservableGauge
	pressure, tokens, utilization metric.Float64ObservableGauge
	limits                        limitGauges // of limiters and ceilings: limits.go
}

// register creates the observable gauges on meter and the callback that
// reads them.
func (w *watchlist) register(meter metric.Meter) error {
	var errs [4]error
	w.state, errs[0] = meter.Int64ObservableGauge(MetricBreakerState, metric.WithUnit("{breaker}"),
		metric.WithDescription("Circuit breakers by their current state: 1 for each breaker, with its state as an attribute."))
	w.pressure, errs[1] = meter.Float64ObservableGauge(MetricBreakerPressure, metric.WithUnit("1"),
		metric.WithDescription("How close each circuit breaker is to opening on failures: 0 without failures, 1 at a trip point or when not closed."))
	w.tokens, errs[2] = meter.Float64ObservableGauge(MetricBudgetTokens, metric.WithUnit("{token}"),
		metric.WithDescription("Balance of each retry budget."))
	w.utilization, errs[3] = meter.Float64ObservableGauge(MetricBudgetUtilization, metric.WithUnit("1"),
		metric.WithDescription("Fraction of each retry budget that is spent: 0 full, 1 empty."))
	limits, err := w.limits.register(meter)
	if err := errors.Join(append(errs[:], err)...); err != nil {
		return err
	}
	_, err = meter.RegisterCallback(w.collect, append(limits, w.state, w.pressure, w.tokens, w.utilization)...)
	return err
}

// add reports what observe observes at every collection until the returned
// function is called.
func (w *watchlist) add(observe func(metric.Observer)) (stop func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.each == nil {
		w.each = make(map[uint64]func(metric.Observer))
	}
	w.seq++
	id := w.seq
	w.each[id] = observe
	var once sync.Once
	return func() {
		once.Do(func() {
			w.mu.Lock()
			delete(w.each, id)
			w.mu.Unlock()
		})
	}
}

// collect observes everything added. It reads without holding mu, since
// reading a breaker or a limiter takes its lock.
func (w *watchlist) collect(_ context.Context, o metric.Observer) error {
	w.mu.Lock()
	observers := make([]func(metric.Observer), 0, len(w.each))
	for _, observe := range w.each {
		observers = append(observers, observe)
	}
	w.mu.Unlock()
	for _, observe := range observers {
		observe(o)
	}
	return nil
}

// dependency reports d's breaker state and pressure and its budget's
// balance and utilization, those it has.
func (w *watchlist) dependency(o metric.Observer, d health.Dependency) {
	if b := d.Breaker; b != nil {
		o.ObserveInt64(w.state, 1, metric.WithAttributeSet(attribute.NewSet(breakerLabels(d.Name, snake(b.State), b.Shadow)...)))
		kvs := []attribute.KeyValue{AttrBreaker.String(d.Name)}
		if b.Shadow {
			kvs = append(kvs, AttrBreakerShadow.Bool(true))
		}
		o.ObserveFloat64(w.pressure, b.Pressure, metric.WithAttributeSet(attribute.NewSet(kvs...)))
	}
	if b := d.Budget; b != nil {
		set := metric.WithAttributeSet(attribute.NewSet(AttrBudget.String(d.Name)))
		o.ObserveFloat64(w.tokens, b.Tokens, set)
		o.ObserveFloat64(w.utilization, b.Utilization, set)
	}
}

// ObserveBreaker reports b's state and pressure in the observable gauges
// resilience.breaker.state and resilience.breaker.pressure, labelled with its
// name, at every collection until stop is called. Reading a breaker changes
// nothing (see breaker.Breaker.State). Give every observed breaker its own
// name: two of one name report one series.
func (t *Telemetry) ObserveBreaker(b *breaker.Breaker) (stop func()) {
	return t.ObserveHealth(health.Of(b.Name(), b, nil))
}

// ObserveBudget reports b's balance and utilization in the observable
// gauges resilience.budget.tokens and resilience.budget.utilization,
// labelled with its name, at every collection until stop is called. A nil
// budget (unlimited) is not reported.
func (t *Telemetry) ObserveBudget(b *budget.Budget) (stop func()) {
	if b == nil {
		return func() {}
	}
	return t.ObserveHealth(health.Of(b.Name(), nil, b))
}

// ObserveHealth reports the breaker and budget of every dependency src
// lists at each collection, as ObserveBreaker and ObserveBudget do, each
// labelled with the dependency's name, until stop is called: a dependency
// src no longer lists is no longer reported. It is how an integration's
// hosts or targets are observed (see health.Observer), and works for any
// source of a health view; src must list each name once.
func (t *Telemetry) ObserveHealth(src health.Source) (stop func()) {
	return t.watched.add(func(o metric.Observer) {
		for d := range src.Dependencies() {
			t.watched.dependency(o, d)
		}
	})
}

// observePreset observes the breaker and budget of a standard pipeline.
func observePreset[T any](t *Telemetry, p *standard.Pipeline[T]) (stop func()) {
	return t.ObserveHealth(health.Preset(p))
}

// ObserveScopes reports the breaker and budget of every key s holds at each
// collection, as ObserveBreaker and ObserveBudget do, until stop is called:
// a key evicted is no longer reported, a key added is. Each key's series are
// labelled with its pipeline's name, so their number is bounded by the
// scopes' MaxKeys; keep it under the meter provider's cardinality limit
// (2000 series per instrument by default in the Go SDK). Reading the keys
// is not a use: a key still goes idle and is evicted as it would.
func ObserveScopes[K comparable, T any](t *Telemetry, s *standard.Scopes[K, T]) (stop func()) {
	return t.ObserveHealth(health.Scopes(s))
}

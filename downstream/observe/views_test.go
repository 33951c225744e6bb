package observe_test

// What every view must say of a dependency, healthy and tripped: the same
// expectations for each integration, so that they cannot drift apart.

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline/health"
	pipelineotel "github.com/resilience-go/pipeline/otel"
)

// views is everything an operator reads of one dependency: the metrics, the
// log and the health view, where the dependency is name (a host, a target,
// a key) in the gauges, the log and the health view, and family (its
// integration's name) in the counters and histograms.
type views struct {
	meter  meter
	logs   *logs
	health func() health.Report
	name   string
	family string
}

// expectClosed checks what every view says of a dependency that has
// answered the ok calls made so far and nothing else: calls counted ok, a
// closed breaker under no pressure, no trip counted or logged, a full
// budget.
func (v views) expectClosed(t *testing.T, ok uint64) {
	t.Helper()
	got := v.meter.collect(t)
	assert.Equal(t, ok, got.calls(v.family, "ok"), "calls counted ok")
	assert.Equal(t, ok, got.total(v.family), "calls counted")
	assert.Equal(t, []string{"closed"}, got.states(v.name), "breaker state gauge")
	assert.Zero(t, got.gauge(t, pipelineotel.MetricBreakerPressure, pipelineotel.AttrBreaker.String(v.name)), "breaker pressure gauge")
	assert.Empty(t, got.trips(v.family), "trips counted")
	assert.Empty(t, v.logs.transitions(t, v.name), "transitions logged")

	dep := dependency(t, v.health(), v.name)
	require.NotNil(t, dep.Breaker, "the health view's breaker")
	assert.Equal(t, "closed", dep.Breaker.State)
	assert.Zero(t, dep.Breaker.Trips)
	assert.Nil(t, dep.Breaker.BreakEnds)
	require.NotNil(t, dep.Budget, "the health view's budget")
	assert.InDelta(t, dep.Budget.Capacity, got.gauge(t, pipelineotel.MetricBudgetTokens, pipelineotel.AttrBudget.String(v.name)), 1e-9,
		"a budget no retry has drawn on is full")
}

// expectOpen checks what every view says of a dependency whose breaker has
// just opened on failures in a row, after calls calls in all, refused of
// them refused by the open breaker: every call counted once and the refused
// ones as dependency_unavailable, one trip counted (under the family, not
// the name, so that the counter's series stay few whatever the number of
// hosts) and logged, and the breaker open, at full pressure, in the gauges
// (under the name) and the health view.
func (v views) expectOpen(t *testing.T, calls, refused uint64) {
	t.Helper()
	got := v.meter.collect(t)
	assert.Equal(t, calls, got.total(v.family), "calls counted")
	assert.Equal(t, refused, got.calls(v.family, "dependency_unavailable"), "calls counted refused")
	assert.Equal(t, []string{"open"}, got.states(v.name), "breaker state gauge")
	assert.Empty(t, got.states(v.family), "a breaker state gauge labelled with the family")
	assert.Equal(t, 1.0, got.gauge(t, pipelineotel.MetricBreakerPressure, pipelineotel.AttrBreaker.String(v.name)), "breaker pressure gauge")
	assert.Equal(t, map[string]float64{"consecutive_failures": 1}, got.trips(v.family), "trips counted, by cause")
	assert.Empty(t, got.trips(v.name), "trips counted under the dependency's own name")
	tokens := got.gauge(t, pipelineotel.MetricBudgetTokens, pipelineotel.AttrBudget.String(v.name))
	utilization := got.gauge(t, pipelineotel.MetricBudgetUtilization, pipelineotel.AttrBudget.String(v.name))
	assert.True(t, tokens >= 0 && utilization >= 0 && utilization <= 1, "budget gauges: %v tokens, %v spent", tokens, utilization)

	logged := v.logs.transitions(t, v.name)
	if assert.Len(t, logged, 1, "transitions logged") {
		tr := logged[0]
		assert.Equal(t, "WARN", tr.Level)
		assert.Equal(t, "breaker", tr.Stage)
		assert.Equal(t, "closed", tr.Event["from"])
		assert.Equal(t, "open", tr.Event["to"])
		assert.Equal(t, "consecutive failures", tr.Event["cause"])
	}

	dep := dependency(t, v.health(), v.name)
	require.NotNil(t, dep.Breaker, "the health view's breaker")
	assert.Equal(t, "open", dep.Breaker.State)
	assert.Equal(t, 1.0, dep.Breaker.Pressure)
	assert.Equal(t, 1, dep.Breaker.Trips)
	assert.NotNil(t, dep.Breaker.BreakEnds, "an open breaker says when its break ends")
	require.NotNil(t, dep.Budget, "the health view's budget")
	assert.LessOrEqual(t, tokens, dep.Budget.Capacity)
}

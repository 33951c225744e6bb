package simulation

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline/outcome"
)

// start starts m or fails the test.
func start(t *testing.T, m Model) Dependency {
	t.Helper()
	d, err := m.Start()
	require.NoError(t, err)
	return d
}

// ask sends one attempt at at to d.
func ask(d Dependency, r *rand.Rand, at, limit time.Duration) Response {
	return d.Respond(Attempt{At: at, Limit: limit, Rand: r})
}

func newRand() *rand.Rand { return rand.New(rand.NewPCG(1, 2)) }

// quantile returns the q-th quantile of samples by nearest rank.
func quantile(samples []time.Duration, q float64) time.Duration {
	s := slices.Clone(samples)
	slices.Sort(s)
	return rank(s, q)
}

func TestHealthyFitsItsQuantiles(t *testing.T) {
	for _, h := range []Healthy{{}, {P50: 5 * time.Millisecond, P99: 200 * time.Millisecond}, {P50: time.Second, P99: 1500 * time.Millisecond}} {
		d, r := start(t, h), newRand()
		var samples []time.Duration
		for i := range 200_000 {
			resp := ask(d, r, time.Duration(i)*time.Millisecond, 0)
			require.Equal(t, outcome.OK, resp.Verdict.Kind)
			samples = append(samples, resp.Latency)
		}
		p50, p99 := cmpOr(h.P50, defaultP50), cmpOr(h.P99, defaultP99)
		assert.InEpsilon(t, float64(p50), float64(quantile(samples, 0.5)), 0.02, "p50 of %+v", h)
		assert.InEpsilon(t, float64(p99), float64(quantile(samples, 0.99)), 0.04, "p99 of %+v", h)
	}
}

func cmpOr(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

func TestHealthyWithEqualQuantilesIsConstant(t *testing.T) {
	d, r := start(t, Healthy{P50: 7 * time.Millisecond, P99: 7 * time.Millisecond}), newRand()
	for i := range 100 {
		assert.Equal(t, 7*time.Millisecond, ask(d, r, time.Duration(i), 0).Latency)
	}
}

// fixed is a dependency whose every attempt succeeds in exactly 10 ms.
var fixed = Healthy{P50: 10 * time.Millisecond, P99: 10 * time.Millisecond}

func TestBrownoutSlowsOnlyItsInterval(t *testing.T) {
	d, r := start(t, Brownout{Base: fixed, From: time.Second, To: 2 * time.Second, Factor: 4}), newRand()
	for _, tc := range []struct {
		at   time.Duration
		want time.Duration
	}{{999 * time.Millisecond, 10 * time.Millisecond}, {time.Second, 40 * time.Millisecond}, {1999 * time.Millisecond, 40 * time.Millisecond}, {2 * time.Second, 10 * time.Millisecond}} {
		resp := ask(d, r, tc.at, 0)
		assert.Equal(t, tc.want, resp.Latency, "at %v", tc.at)
		assert.Equal(t, outcome.OK, resp.Verdict.Kind)
	}
	d = start(t, Brownout{Base: fixed})
	assert.Equal(t, time.Duration(defaultBrownoutFactor)*10*time.Millisecond, ask(d, r, time.Hour, 0).Latency, "the default brownout never ends")
}

func TestOutage(t *testing.T) {
	r := newRand()
	transient := outcome.Verdict{Kind: outcome.Transient}
	fast := start(t, Outage{Base: fixed, From: time.Second, To: 3 * time.Second})
	assert.Equal(t, Response{Latency: 10 * time.Millisecond}, ask(fast, r, 999*time.Millisecond, 0))
	assert.Equal(t, Response{Latency: defaultRefusedLatency, Verdict: transient}, ask(fast, r, time.Second, 0))
	assert.Equal(t, Response{Latency: 10 * time.Millisecond}, ask(fast, r, 3*time.Second, 0))

	hang := start(t, Outage{Base: fixed, From: time.Second, To: 3 * time.Second, Hang: true})
	assert.Equal(t, Response{Latency: 250 * time.Millisecond, Verdict: transient}, ask(hang, r, 2*time.Second, 250*time.Millisecond), "hangs until the limit")
	assert.Equal(t, Response{Latency: 500 * time.Millisecond, Verdict: transient}, ask(hang, r, 2500*time.Millisecond, 0), "with no limit, until the outage ends")
}

func TestFailingFraction(t *testing.T) {
	d, r := start(t, FailingFraction{Base: fixed, Fraction: 0.3, From: time.Second, To: 0}), newRand()
	failed := 0
	const n = 100_000
	for i := range n {
		resp := ask(d, r, time.Second+time.Duration(i), 0)
		assert.Equal(t, 10*time.Millisecond, resp.Latency)
		if resp.Verdict.Kind == outcome.Transient {
			failed++
		}
	}
	assert.InDelta(t, 0.3, float64(failed)/n, 0.01)
	assert.Equal(t, outcome.OK, ask(d, r, 999*time.Millisecond, 0).Verdict.Kind, "before From")
}

func TestModelsCompose(t *testing.T) {
	m := Outage{From: 20 * time.Second, To: 25 * time.Second,
		Base: Brownout{From: 5 * time.Second, To: 10 * time.Second, Factor: 2,
			Base: FailingFraction{Fraction: 1, From: 40 * time.Second, To: 41 * time.Second, Base: fixed}}}
	d, r := start(t, m), newRand()
	assert.Equal(t, Response{Latency: 20 * time.Millisecond}, ask(d, r, 6*time.Second, 0))
	assert.Equal(t, outcome.Transient, ask(d, r, 21*time.Second, 0).Verdict.Kind)
	assert.Equal(t, Response{Latency: 10 * time.Millisecond, Verdict: outcome.Verdict{Kind: outcome.Transient}}, ask(d, r, 40*time.Second, 0))
	assert.ElementsMatch(t, []Interval{
		{From: 20 * time.Second, To: 25 * time.Second, Name: "outage"},
		{From: 5 * time.Second, To: 10 * time.Second, Name: "brownout (2x)"},
		{From: 40 * time.Second, To: 41 * time.Second, Name: "failures"},
	}, faultsOf(m), "each fault named by its model")
	assert.Nil(t, faultsOf(Healthy{}))
	assert.Equal(t, []Interval{{From: time.Second, To: 2 * time.Second, Name: "outage (hanging)"}}, faultsOf(Capacity{Rate: 1, Base: Outage{From: time.Second, To: 2 * time.Second, Hang: true}}))
	assert.ElementsMatch(t, []Interval{{From: time.Second, Name: "failures (30%)"}, {Name: "brownout (5x)"}},
		faultsOf(FailingFraction{Fraction: 0.3, From: time.Second, Base: Brownout{}}), "a fraction and the default factor in the names")
}

func TestIntervalContains(t *testing.T) {
	i := Interval{From: time.Second, To: 2 * time.Second}
	assert.False(t, i.Contains(time.Second-1))
	assert.True(t, i.Contains(time.Second))
	assert.False(t, i.Contains(2*time.Second))
	assert.True(t, Interval{From: time.Second}.Contains(time.Hour), "a To of 0 never ends")
}

func TestModelsRefuseImpossibleSettings(t *testing.T) {
	for _, tc := range []struct {
		m    Model
		want string
	}{
		{Healthy{P50: -1}, "simulation: Healthy.P50 and Healthy.P99 must not be negative, got -1ns and 0s"},
		{Healthy{P50: time.Second, P99: time.Millisecond}, "simulation: Healthy.P99 (1ms) must not be below Healthy.P50 (1s)"},
		{Healthy{P50: time.Second}, "simulation: Healthy.P99 (100ms) must not be below Healthy.P50 (1s)"},
		{Brownout{Factor: -2}, "simulation: Brownout.Factor must be a finite number above 0, got -2"},
		{Brownout{From: 2 * time.Second, To: time.Second}, "simulation: Brownout.To (1s) must be after Brownout.From (2s), or 0 for never"},
		{Brownout{Base: Healthy{P50: -1}}, "simulation: Healthy.P50 and Healthy.P99 must not be negative, got -1ns and 0s"},
		{Outage{From: -time.Second}, "simulation: Outage.From must not be negative, got -1s"},
		{Outage{Refused: -1}, "simulation: Outage.Refused must not be negative, got -1ns"},
		{FailingFraction{}, "simulation: FailingFraction.Fraction must be in (0, 1], got 0"},
		{FailingFraction{Fraction: 1.5}, "simulation: FailingFraction.Fraction must be in (0, 1], got 1.5"},
		{Capacity{}, "simulation: Capacity.Rate must be a finite number above 0, got 0"},
		{Capacity{Rate: 10, Cold: 2}, "simulation: Capacity.Cold must be in (0, 1], got 2"},
		{Capacity{Rate: 10, Warmup: -time.Second}, "simulation: Capacity.Warmup must not be negative, got -1s"},
		{Capacity{Rate: 10, Knockback: -time.Second}, "simulation: Capacity.Knockback must not be negative, got -1s"},
		{Capacity{Rate: 10, Saturation: 0.5}, "simulation: Capacity.Saturation must be a finite number of at least 1, got 0.5"},
	} {
		_, err := tc.m.Start()
		assert.EqualError(t, err, tc.want, "%#v", tc.m)
	}
}

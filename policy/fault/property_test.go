package fault_test

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"pgregory.net/rapid"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/policy/fault"
)

// calls is how many calls each case of the property makes.
const calls = 1000

// run makes n calls through a fault stage built from cfg, on virtual time,
// and returns the faults each call got, in order, as a set of bits: bit k set
// for a fault of Kind k. It checks each call's events against what the call
// did: a delay of Config.Delay exactly when Latency was reported, an
// injected error or value exactly when an outcome fault was.
func run(t *testing.T, cfg fault.Config[string], n int) (faults []uint8) {
	synctest.Test(t, func(t *testing.T) {
		p, err := fault.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		var got uint8 // the faults of the call running, from its events
		pl := pipeline.New[string](p).With(pipeline.Options[string]{
			OnEvent: func(_ context.Context, _ pipeline.Source, e pipeline.Event) {
				if i, ok := e.(fault.Injected); ok {
					got |= 1 << i.Kind
				}
			},
		})
		for range n {
			got = 0
			start := time.Now()
			v, err := pl.Execute(context.Background(), func(context.Context) (string, error) { return "real", nil })
			delayed := time.Since(start) == cfg.Delay
			injected := errors.Is(err, fault.ErrInjected) || v == "fake"
			if delayed != (got&(1<<fault.Latency) != 0) || injected != (got&^(1<<fault.Latency) != 0) {
				t.Fatalf("events %08b for a call that returned (%q, %v) after %v", got, v, err, time.Since(start))
			}
			faults = append(faults, got)
		}
	})
	return faults
}

// Over calls seeded calls, each fault is injected at its configured rate:
// the count lies where a binomial count of that rate falls but once in a
// billion runs (each tail, computed exactly, above 1e-9), and the same seed
// gives exactly the same faults to the same calls.
func TestInjectedRatesAndReproducibility(t *testing.T) {
	rate := rapid.SampledFrom([]float64{0, 0.001, 0.01, 0.1, 0.25, 0.5, 1})
	rapid.Check(t, func(rt *rapid.T) {
		cfg := fault.Config[string]{Enabled: true, NewValue: func() string { return "fake" }, Delay: time.Millisecond}
		budget := 1.0
		for _, r := range []*float64{&cfg.Transient, &cfg.Throttled, &cfg.Permanent, &cfg.Value} {
			*r = min(rate.Draw(rt, "rate"), budget)
			budget -= *r
		}
		cfg.Latency = rate.Draw(rt, "latency")
		seed := rapid.Uint64().Draw(rt, "seed")
		cfg.Rand = rand.NewPCG(seed, 0)
		first := run(t, cfg, calls)

		for k, p := range map[fault.Kind]float64{
			fault.Transient: cfg.Transient, fault.Throttled: cfg.Throttled, fault.Permanent: cfg.Permanent,
			fault.Value: cfg.Value, fault.Latency: cfg.Latency,
		} {
			n := 0
			for _, f := range first {
				if f&(1<<k) != 0 {
					n++
				}
			}
			if below, above := binomialTails(calls, p, n); below < 1e-9 || above < 1e-9 {
				rt.Fatalf("%v injected %d times in %d calls at rate %v: P(X <= %d) = %.3g, P(X >= %d) = %.3g",
					k, n, calls, p, n, below, n, above)
			}
		}

		cfg.Rand = rand.NewPCG(seed, 0)
		if again := run(t, cfg, calls); !slices.Equal(first, again) {
			i := 0
			for first[i] == again[i] {
				i++
			}
			rt.Fatalf("seed %d: call %d got faults %08b, then %08b", seed, i, first[i], again[i])
		}
	})
}

// binomialTails returns P(X <= k) and P(X >= k) for X binomial with n trials
// of probability p, summed exactly in log space.
func binomialTails(n int, p float64, k int) (below, above float64) {
	pmf := func(i int) float64 {
		switch {
		case p == 0:
			return map[bool]float64{true: 1}[i == 0]
		case p == 1:
			return map[bool]float64{true: 1}[i == n]
		}
		ln, _ := math.Lgamma(float64(n + 1))
		li, _ := math.Lgamma(float64(i + 1))
		lr, _ := math.Lgamma(float64(n - i + 1))
		return math.Exp(ln - li - lr + float64(i)*math.Log(p) + float64(n-i)*math.Log1p(-p))
	}
	for i := 0; i <= n; i++ {
		if i <= k {
			below += pmf(i)
		}
		if i >= k {
			above += pmf(i)
		}
	}
	return below, above
}

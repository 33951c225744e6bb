package simulation

import (
	"fmt"
	"math"
	"time"

	"github.com/resilience-go/pipeline/simulation/chart"

	"github.com/resilience-go/pipeline/outcome"
)

// Defaults of the models' zero-valued fields.
const (
	// defaultP50 is the median latency of a [Healthy] dependency.
	defaultP50 = 20 * time.Millisecond
	// defaultP99 is the 99th-percentile latency of a [Healthy] dependency.
	defaultP99 = 100 * time.Millisecond
	// defaultBrownoutFactor is how many times slower a [Brownout] makes attempts.
	defaultBrownoutFactor = 5.0
	// defaultRefusedLatency is how long an attempt refused by an [Outage] takes
	// when the outage does not hang: about a refused TCP connection.
	defaultRefusedLatency = time.Millisecond
)

// z99 is the 0.99 quantile of the standard normal distribution.
const z99 = 2.3263478740408408

// maxLatency bounds every modelled latency, so that no draw overflows.
const maxLatency = 24 * time.Hour

// Healthy is a dependency that always succeeds, with a log-normal latency whose
// median is P50 and whose 99th percentile is P99: the latency is
// exp(mu + sigma*Z) with Z standard normal, mu = ln P50 and
// sigma = (ln P99 - ln P50) / 2.326. With P99 equal to P50 every attempt takes
// exactly P50.
//
// The zero value is a dependency with a 20 ms median and a 100 ms p99.
type Healthy struct {
	// P50 is the median latency. Zero means 20 ms.
	P50 time.Duration
	// P99 is the 99th-percentile latency, at least P50. Zero means 100 ms.
	P99 time.Duration
}

// Start validates h and returns its state for one run.
func (h Healthy) Start() (Dependency, error) {
	if h.P50 < 0 || h.P99 < 0 {
		return nil, fmt.Errorf("simulation: Healthy.P50 and Healthy.P99 must not be negative, got %v and %v", h.P50, h.P99)
	}
	if h.P50 == 0 {
		h.P50 = defaultP50
	}
	if h.P99 == 0 {
		h.P99 = defaultP99
	}
	if h.P99 < h.P50 {
		return nil, fmt.Errorf("simulation: Healthy.P99 (%v) must not be below Healthy.P50 (%v)", h.P99, h.P50)
	}
	mu := math.Log(float64(h.P50))
	return &healthy{p50: h.P50, mu: mu, sigma: (math.Log(float64(h.P99)) - mu) / z99}, nil
}

// healthy is a Healthy model's fitted log-normal distribution.
type healthy struct {
	p50       time.Duration
	mu, sigma float64
}

// Respond draws the attempt's latency; the attempt succeeds.
func (h *healthy) Respond(a Attempt) Response {
	if h.sigma == 0 {
		return Response{Latency: h.p50}
	}
	return Response{Latency: scaled(math.Exp(h.mu+h.sigma*a.Rand.NormFloat64()), 1)}
}

// scaled returns ns*factor nanoseconds, rounded, as a Duration bounded by
// maxLatency.
func scaled(ns, factor float64) time.Duration {
	f := math.Round(ns * factor)
	if !(f < float64(maxLatency)) {
		return maxLatency
	}
	return time.Duration(f)
}

// Brownout makes its base model's attempts Factor times slower while they start
// within [From, To). Outcomes are unchanged.
type Brownout struct {
	// Base is the dependency browned out. Nil means Healthy{}.
	Base Model
	// From and To bound the brownout; a To of 0 means it never ends.
	From, To time.Duration
	// Factor multiplies the latency, a finite number above 0. Zero means
	// 5.
	Factor float64
}

// Start validates b and returns its state for one run.
func (b Brownout) Start() (Dependency, error) {
	if err := (Interval{From: b.From, To: b.To}).validate("Brownout"); err != nil {
		return nil, err
	}
	if b.Factor == 0 {
		b.Factor = defaultBrownoutFactor
	}
	if !(b.Factor > 0 && !math.IsInf(b.Factor, 1)) {
		return nil, fmt.Errorf("simulation: Brownout.Factor must be a finite number above 0, got %v", b.Factor)
	}
	base, err := startBase(b.Base)
	if err != nil {
		return nil, err
	}
	return &brownout{base: base, during: Interval{From: b.From, To: b.To}, factor: b.Factor}, nil
}

// Faults returns the brownout's interval, named by its factor ("brownout
// (5x)"), and its base's faults.
func (b Brownout) Faults() []Interval {
	factor := b.Factor
	if factor == 0 {
		factor = defaultBrownoutFactor
	}
	return withFault(b.Base, Interval{From: b.From, To: b.To, Name: "brownout (" + chart.Label(factor) + "x)"})
}

type brownout struct {
	base   Dependency
	during Interval
	factor float64
}

// Respond asks the base and slows the answer down during the brownout.
func (b *brownout) Respond(a Attempt) Response {
	r := b.base.Respond(a)
	if b.during.Contains(a.At) {
		r.Latency = scaled(float64(r.Latency), b.factor)
	}
	return r
}

// Outage makes every attempt that starts within [From, To) fail Transient,
// without reaching its base model (which sees no traffic meanwhile). The failure
// is fast, like a refused connection, taking Refused; or, with Hang, the attempt
// hangs until the client stops waiting (its Limit), or until the outage ends if
// the client sets no limit.
type Outage struct {
	// Base is the dependency that goes down. Nil means Healthy{}.
	Base Model
	// From and To bound the outage; a To of 0 means it never ends.
	From, To time.Duration
	// Hang makes attempts hang instead of failing fast.
	Hang bool
	// Refused is how long a fast failure takes. Zero means
	// 1 ms; it must not be negative.
	Refused time.Duration
}

// Start validates o and returns its state for one run.
func (o Outage) Start() (Dependency, error) {
	if err := (Interval{From: o.From, To: o.To}).validate("Outage"); err != nil {
		return nil, err
	}
	if o.Refused < 0 {
		return nil, fmt.Errorf("simulation: Outage.Refused must not be negative, got %v", o.Refused)
	}
	if o.Refused == 0 {
		o.Refused = defaultRefusedLatency
	}
	base, err := startBase(o.Base)
	if err != nil {
		return nil, err
	}
	return &outage{base: base, during: Interval{From: o.From, To: o.To}, hang: o.Hang, refused: o.Refused}, nil
}

// Faults returns the outage's interval, named "outage" ("outage (hanging)"
// with Hang), and its base's faults.
func (o Outage) Faults() []Interval {
	name := "outage"
	if o.Hang {
		name = "outage (hanging)"
	}
	return withFault(o.Base, Interval{From: o.From, To: o.To, Name: name})
}

type outage struct {
	base    Dependency
	during  Interval
	hang    bool
	refused time.Duration
}

// Respond fails the attempt during the outage and asks the base otherwise.
func (o *outage) Respond(a Attempt) Response {
	if !o.during.Contains(a.At) {
		return o.base.Respond(a)
	}
	failed := outcome.Verdict{Kind: outcome.Transient}
	if !o.hang {
		return Response{Latency: o.refused, Verdict: failed}
	}
	switch {
	case a.Limit > 0:
		return Response{Latency: a.Limit, Verdict: failed}
	case o.during.To > 0:
		return Response{Latency: o.during.To - a.At, Verdict: failed}
	}
	return Response{Latency: maxLatency, Verdict: failed}
}

// FailingFraction makes a Fraction of the attempts that start within [From, To)
// fail Transient, chosen at random; the others are left to the base model.
// A failing attempt still takes the base model's latency.
type FailingFraction struct {
	// Base is the dependency that fails. Nil means Healthy{}.
	Base Model
	// Fraction is the share of attempts that fail, in (0, 1]. It has no default.
	Fraction float64
	// From and To bound the failures; the zero values mean from the start of the
	// run, forever.
	From, To time.Duration
}

// Start validates f and returns its state for one run.
func (f FailingFraction) Start() (Dependency, error) {
	if err := (Interval{From: f.From, To: f.To}).validate("FailingFraction"); err != nil {
		return nil, err
	}
	if !(f.Fraction > 0 && f.Fraction <= 1) {
		return nil, fmt.Errorf("simulation: FailingFraction.Fraction must be in (0, 1], got %v", f.Fraction)
	}
	base, err := startBase(f.Base)
	if err != nil {
		return nil, err
	}
	return &failing{base: base, during: Interval{From: f.From, To: f.To}, fraction: f.Fraction}, nil
}

// Faults returns the failures' interval, named "failures" ("failures (30%)"
// for a Fraction of 0.3), and the base's faults.
func (f FailingFraction) Faults() []Interval {
	name := "failures"
	if f.Fraction < 1 {
		name = "failures (" + chart.Label(100*f.Fraction) + "%)"
	}
	return withFault(f.Base, Interval{From: f.From, To: f.To, Name: name})
}

type failing struct {
	base     Dependency
	during   Interval
	fraction float64
}

// Respond asks the base, and turns the answer into a failure for the chosen
// fraction of attempts.
func (f *failing) Respond(a Attempt) Response {
	r := f.base.Respond(a)
	if f.during.Contains(a.At) && (f.fraction >= 1 || a.Rand.Float64() < f.fraction) {
		r.Verdict = outcome.Verdict{Kind: outcome.Transient}
	}
	return r
}

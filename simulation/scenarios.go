package simulation

import (
	"fmt"
	"math"
	"time"

	"github.com/resilience-go/pipeline/simulation/chart"

	"github.com/resilience-go/pipeline/budget"
	"github.com/resilience-go/pipeline/policy/breaker"
)

// DefaultSeed is the seed the built-in scenarios run with unless told otherwise.
const DefaultSeed = 1

// Scenario is a named demonstration: a few variants of one configuration, run
// with the same seed and compared. The built-in ones are listed by
// [Scenarios]; each is also a test in this package that asserts its claim.
type Scenario struct {
	// Name identifies the scenario, such as "retry-storm".
	Name string
	// Claim says what the scenario shows.
	Claim string
	// Pending, when not empty, says what the scenario still needs from the
	// library: it cannot run yet, and Variants is nil.
	Pending string
	// Variants returns the runs to compare, built with seed.
	Variants func(seed uint64) []Config
	// Compare returns charts that overlay the variants' reports, in the order of
	// Variants. Nil means none.
	Compare func(reports []*Report) []chart.Chart
	// Summary states the scenario's result from the variants' reports, in the
	// order of Variants, as text ending in a newline, such as the figures the
	// claim compares. Nil means none.
	Summary func(reports []*Report) string
}

// Run runs every variant of s with seed, in order, and returns their reports.
func (s Scenario) Run(seed uint64) ([]*Report, error) {
	if s.Pending != "" || s.Variants == nil {
		return nil, fmt.Errorf("simulation: scenario %s cannot run yet: %s", s.Name, s.Pending)
	}
	var reports []*Report
	for _, c := range s.Variants(seed) {
		r, err := Run(c)
		if err != nil {
			return nil, fmt.Errorf("simulation: scenario %s, variant %q: %w", s.Name, c.Name, err)
		}
		reports = append(reports, r)
	}
	return reports, nil
}

// Under returns s with the calls of every variant arriving as a says (see
// [Arrivals]), so that any scenario can be run under bursts: go run
// ./cmd/simulate -arrivals poisson. Its claim and its test are the even
// arrivals'; under others it shows what changes.
func (s Scenario) Under(a Arrivals) Scenario {
	if variants := s.Variants; variants != nil {
		s.Variants = func(seed uint64) []Config {
			cs := variants(seed)
			for i := range cs {
				cs[i].Arrivals = a
			}
			return cs
		}
	}
	return s
}

// Scenarios returns the built-in scenarios, in a fixed order, including the
// pending ones.
func Scenarios() []Scenario {
	return []Scenario{
		{
			Name:     "retry-storm",
			Claim:    "a budget keeps the load on a failing dependency near 1x where 3 attempts per call triple it",
			Variants: retryStorm,
			Compare: func(rs []*Report) []chart.Chart {
				return []chart.Chart{compare("attempts per second", "attempts", rs, 1, attemptsPerSecond)}
			},
		},
		{
			Name:     "synchronized-probe",
			Claim:    "200 breakers that opened together probe as one pulse without break jitter, and spread over the break with equal jitter",
			Variants: synchronizedProbe,
			Compare: func(rs []*Report) []chart.Chart {
				return []chart.Chart{compare("probes per 100 ms", "probes per 100 ms", rs, probeBucket.Seconds(), probesPerBucket)}
			},
		},
		{
			Name:     "cold-start",
			Claim:    "a cold dependency offered less than its cold capacity warms up; offered its full load it is knocked back and stays cold",
			Variants: coldStart,
			Compare: func(rs []*Report) []chart.Chart {
				return []chart.Chart{compare("served per second", "served calls", rs, 1, servedPerSecond)}
			},
		},
		{
			Name:     "hedging",
			Claim:    "hedging at the measured p95 halves the p99 of a heavy-tailed dependency for at most 5% more attempts (1 - 0.95, the hedge stage's MaxExtra)",
			Variants: hedging,
			Compare: func(rs []*Report) []chart.Chart {
				return []chart.Chart{
					latencyTail(rs),
					compare("attempts per second", "attempts", rs, 1, attemptsPerSecond),
				}
			},
		},
		{
			Name:     "slow-call-trip",
			Claim:    "a brownout trips a breaker whose slow-call threshold is a multiple of the measured median in about 15 s, while a threshold that chases the p99 never trips",
			Variants: slowCallTrip,
			Compare: func(rs []*Report) []chart.Chart {
				return []chart.Chart{
					compare("slow fraction of the trip window", "slow fraction (peak in the second)", rs, 1, slowFractionPerSecond),
					compare("slow-call threshold", "threshold (ms)", rs, 1, thresholdPerSecond),
					compare("served per second", "served calls", rs, 1, servedPerSecond),
				}
			},
		},
		{
			Name:     "ramp-vs-cliff",
			Claim:    "after a five-second outage of a dependency that must warm (Capacity), a ramped breaker serves more than twice what a cliffed one serves over the next 45 s, and with the trickle during its break more still",
			Variants: rampVsCliff,
			Compare:  rampVsCliffCharts,
			Summary:  rampVsCliffSummary,
		},
		{
			Name:     "probe-lead",
			Claim:    "under the default probe rule, fewer than 0.5% of half-open phases re-open on a healthy heavy-tailed dependency (about 6% with the first probe judged alone), while one 3 times slower than its normal re-opens about 75% of them or more, as the rule before the leads did, and one 4 or 10 times slower more still",
			Variants: probeLead,
			Summary:  probeLeadSummary,
		},
		adaptiveLimitScenario(),
		criticalityScenario(),
	}
}

// lookup returns the built-in scenario called name.
func lookup(name string) (Scenario, bool) {
	for _, s := range Scenarios() {
		if s.Name == name {
			return s, true
		}
	}
	return Scenario{}, false
}

// The retry storm: one process calls a dependency that fails every attempt for
// 30 s, with 3 attempts per call and no breaker, without and with a budget.
const (
	stormRate     = 100 // calls per second
	stormFrom     = 10 * time.Second
	stormTo       = 40 * time.Second
	stormDuration = 60 * time.Second
)

func retryStorm(seed uint64) []Config {
	c := Config{
		Seed:       seed,
		Duration:   stormDuration,
		Rate:       stormRate,
		Dependency: FailingFraction{Fraction: 1, From: stormFrom, To: stormTo},
		Client:     Client{Retry: &Retry{MaxAttempts: 3}},
	}
	without, with := c, c
	without.Name = "retry-storm/no-budget"
	with.Name = "retry-storm/default-budget"
	with.Client.Budget = &budget.Config{}
	return []Config{without, with}
}

// The synchronized probe: 200 processes, each with its own default breaker,
// budget and retry, and a fast-failing outage long enough to open every
// breaker and to fail their first probes.
//
// The dependency's latency is tight (p99 twice the median) so that no probe is
// slow by the breaker's default measured normal (3x the median): slow probes
// re-open a breaker, and with the default Healthy model (p99 5x the median)
// about 5.6% of attempts are that slow, which would mix a second effect into
// this one.
var probeLatency = Healthy{P50: 20 * time.Millisecond, P99: 40 * time.Millisecond}

const (
	probeProcesses = 200
	probeRate      = 5 // calls per second per process
	probeFrom      = 10 * time.Second
	probeTo        = 30 * time.Second
	probeDuration  = 60 * time.Second
)

func synchronizedProbe(seed uint64) []Config {
	variant := func(name string, j breaker.Jitter) Config {
		return Config{
			Name:       name,
			Seed:       seed,
			Duration:   probeDuration,
			Processes:  probeProcesses,
			Rate:       probeRate,
			Dependency: Outage{From: probeFrom, To: probeTo, Base: probeLatency},
			Client: Client{
				Breaker: &breaker.Config{BreakJitter: j},
				Budget:  &budget.Config{},
				Retry:   &Retry{},
			},
		}
	}
	return []Config{
		variant("synchronized-probe/no-jitter", breaker.JitterNone),
		variant("synchronized-probe/equal-jitter", breaker.JitterEqual),
	}
}

// The cold start: a Capacity dependency serving 100 attempts a second when warm
// and 20 when cold, called once per call (no retry, no breaker) for a minute.
const (
	coldCapacity = 100 // attempts per second, warm
	coldLight    = 15  // calls per second, under the cold capacity
	coldFull     = 60  // calls per second, over it
	coldDuration = 60 * time.Second
)

func coldStart(seed uint64) []Config {
	variant := func(name string, rate float64, cold bool) Config {
		return Config{
			Name:       name,
			Seed:       seed,
			Duration:   coldDuration,
			Rate:       rate,
			Dependency: Capacity{Rate: coldCapacity, StartCold: cold},
		}
	}
	return []Config{
		variant("cold-start/warm-at-60", coldFull, false),
		variant("cold-start/cold-at-15", coldLight, true),
		variant("cold-start/cold-at-60", coldFull, true),
	}
}

// Hedging: one process, 200 calls a second for a minute, through the card
// (breaker, budget, retry) against a healthy dependency whose tail is heavy
// (median 20 ms, p99 400 ms), without and with the default hedge.
var hedgingLatency = Healthy{P50: 20 * time.Millisecond, P99: 400 * time.Millisecond}

const (
	hedgingRate     = 200 // calls per second
	hedgingDuration = 60 * time.Second
)

func hedging(seed uint64) []Config {
	c := Config{
		Seed:       seed,
		Duration:   hedgingDuration,
		Rate:       hedgingRate,
		Dependency: hedgingLatency,
		Client:     Client{Breaker: &breaker.Config{}, Budget: &budget.Config{}, Retry: &Retry{}},
	}
	without, with := c, c
	without.Name = "hedging/no-hedge"
	with.Name = "hedging/p95-hedge"
	with.Client.Hedge = &Hedge{}
	return []Config{without, with}
}

// The slow-call trip: one process, 100 calls a second for 3 minutes, through a
// breaker, against the default healthy dependency (median 20 ms, p99 100 ms)
// browned out 10 times from 60 s to 120 s. The first minute is the warm-up: it
// gives the breaker's measured normal 6,000 successes and the p99 estimator
// two full windows.
var slowLatency = Healthy{P50: defaultP50, P99: defaultP99}

const (
	slowRate     = 100 // calls per second
	slowFrom     = 60 * time.Second
	slowTo       = 120 * time.Second
	slowDuration = 180 * time.Second
	slowFactor   = 10
	slowQuantile = 0.99
)

// slowCallTrip returns the variants: the default breaker (3x the measured
// median), a breaker that cannot trip on slowness judged by a threshold that
// chases the p99, and a breaker with a constant threshold at the healthy p99.
// Each has a slow judge, which reads the breaker's own threshold in the first
// and the third.
func slowCallTrip(seed uint64) []Config {
	variant := func(name string, b breaker.Config, j SlowJudge) Config {
		return Config{
			Name:       name,
			Seed:       seed,
			Duration:   slowDuration,
			Rate:       slowRate,
			Dependency: Brownout{Base: slowLatency, From: slowFrom, To: slowTo, Factor: slowFactor},
			Client:     Client{Breaker: &b, SlowJudge: &j},
		}
	}
	off := breaker.SlowCalls{Disabled: true}
	return []Config{
		variant("slow-call-trip/median-3x", breaker.Config{}, SlowJudge{}),
		variant("slow-call-trip/chased-p99", breaker.Config{SlowCalls: off}, SlowJudge{Quantile: slowQuantile}),
		variant("slow-call-trip/fixed-p99", breaker.Config{SlowCalls: off, SlowCallThreshold: slowLatency.P99}, SlowJudge{}),
	}
}

// slowFractionPerSecond is the highest slow fraction of the judge's trip
// window in each second, NaN (not drawn) in the seconds without samples.
func slowFractionPerSecond(r *Report) []float64 {
	v := make([]float64, len(r.Seconds))
	for i, s := range r.Seconds {
		v[i] = s.SlowFraction
		if s.Judged == 0 {
			v[i] = math.NaN()
		}
	}
	return v
}

// thresholdPerSecond is the mean slow-call threshold the samples of each
// second were judged against, in milliseconds, NaN (not drawn) in the seconds
// without an armed one.
func thresholdPerSecond(r *Report) []float64 {
	v := make([]float64, len(r.Seconds))
	for i, s := range r.Seconds {
		v[i] = float64(s.Threshold) / float64(time.Millisecond)
		if s.Threshold == 0 {
			v[i] = math.NaN()
		}
	}
	return v
}

// latencyTail overlays the tail of the latency of served calls: the latency in
// milliseconds at every tenth of a percentile from the 90th to the 99.9th.
func latencyTail(rs []*Report) chart.Chart {
	c := chart.Chart{Title: "latency of served calls, p90 to p99.9", XLabel: "percentile", YLabel: "latency (ms)", Start: 90, Step: 0.1}
	for _, r := range rs {
		v := make([]float64, 100)
		for i := range v {
			v[i] = float64(r.Latency(0.9+float64(i)/1000)) / float64(time.Millisecond)
		}
		c.Lines = append(c.Lines, chart.Line{Name: r.Name, Values: v})
	}
	return c
}

// compare overlays one series of each report, named by the report, over
// the runs' time with their faults shaded.
func compare(title, ylabel string, rs []*Report, step float64, series func(*Report) []float64) chart.Chart {
	c := chart.Chart{Title: title, XLabel: "time (s)", YLabel: ylabel, Step: step}
	var durations []time.Duration
	var faults []Interval
	for _, r := range rs {
		c.Lines = append(c.Lines, chart.Line{Name: r.Name, Values: series(r)})
		durations = append(durations, r.Duration)
		faults = append(faults, r.Faults...)
	}
	return overRuns(c, durations, faults)
}

func attemptsPerSecond(r *Report) []float64 {
	v := make([]float64, len(r.Seconds))
	for i, s := range r.Seconds {
		v[i] = float64(s.Attempts)
	}
	return v
}

func servedPerSecond(r *Report) []float64 {
	v := make([]float64, len(r.Seconds))
	for i, s := range r.Seconds {
		v[i] = float64(s.Served)
	}
	return v
}

// probesPerBucket is the probes of each probeBucket, 0 in the buckets after
// the last probe.
func probesPerBucket(r *Report) []float64 {
	v := make([]float64, max(len(r.ProbeSeries), int((r.Duration+probeBucket-1)/probeBucket)))
	for i, n := range r.ProbeSeries {
		v[i] = float64(n)
	}
	return v
}

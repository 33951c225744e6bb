package simulation

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/resilience-go/pipeline/simulation/chart"

	"github.com/resilience-go/pipeline/policy/adaptive"
	"github.com/resilience-go/pipeline/policy/bulkhead"
)

// LimitScenario is a named demonstration of concurrency limits: a few
// variants of one [LimitConfig], run with the same seed and compared, as a
// [Scenario] compares variants of a [Config].
type LimitScenario struct {
	// Name identifies the scenario, such as "adaptive-limit".
	Name string
	// Claim says what the scenario shows.
	Claim string
	// Variants returns the runs to compare, built with seed.
	Variants func(seed uint64) []LimitConfig
	// Compare returns charts that overlay the variants' reports. Nil means
	// none.
	Compare func(reports []*LimitReport) []chart.Chart
	// Summary states the scenario's result from the variants' reports, as
	// text ending in a newline. Nil means none.
	Summary func(reports []*LimitReport) string
}

// Run runs every variant of s with seed, in order, and returns their reports.
func (s LimitScenario) Run(seed uint64) ([]*LimitReport, error) {
	var reports []*LimitReport
	for _, c := range s.Variants(seed) {
		r, err := RunLimit(c)
		if err != nil {
			return nil, fmt.Errorf("simulation: scenario %s, variant %q: %w", s.Name, c.Name, err)
		}
		reports = append(reports, r)
	}
	return reports, nil
}

// LimitScenarios returns the built-in scenarios of concurrency limits, in a
// fixed order.
func LimitScenarios() []LimitScenario {
	return []LimitScenario{{
		Name: "adaptive-limit",
		Claim: "during a brownout an adaptive limit finds what the dependency can serve and serves more than a small fixed bulkhead, " +
			"while a large one lets the dependency's queue grow until every call times out; afterwards the adaptive limit lets the whole load through again",
		Variants: adaptiveLimit,
		Compare: func(rs []*LimitReport) []chart.Chart {
			return []chart.Chart{
				compareLimits("served per second", "served calls", rs, func(s LimitSecond) float64 { return float64(s.Served) }),
				compareLimits("calls the dependency holds", "attempts working or queued inside it (peak)", rs,
					func(s LimitSecond) float64 { return float64(s.Held) }),
				compareLimits("limit", "calls allowed in flight", rs, func(s LimitSecond) float64 { return float64(s.Limit) }),
				compareLimits("median latency of served calls", "ms", rs, func(s LimitSecond) float64 {
					if s.Served == 0 {
						return math.NaN()
					}
					return float64(s.P50) / float64(time.Millisecond)
				}),
			}
		},
		Summary: adaptiveLimitSummary,
	}, criticalityScenario()}
}

// The adaptive limit: one process, 400 calls a second for two and a half
// minutes, each call one attempt cut at 250 ms, against a dependency of 30
// workers whose calls take a median of 20 ms (p99 40 ms), browned out five
// times from 30 s to 90 s. Healthy, the workers serve about 1,400 calls a
// second and the load keeps about 8 of them busy; browned out, they serve
// about 290, less than the 400 offered.
const (
	limitRate     = 400
	limitWorkers  = 30
	limitFrom     = 30 * time.Second
	limitTo       = 90 * time.Second
	limitDuration = 150 * time.Second
	limitTimeout  = 250 * time.Millisecond
	limitSmall    = 16  // twice what the healthy load needs
	limitLarge    = 128 // room for any burst
)

// limitLatency is the dependency's service time: tight, so that the limits'
// effect is not mixed with a heavy tail's.
var limitLatency = Healthy{P50: 20 * time.Millisecond, P99: 40 * time.Millisecond}

// limitDependency is the scenario's dependency.
var limitDependency = Workers{Count: limitWorkers, Base: Brownout{From: limitFrom, To: limitTo, Factor: defaultBrownoutFactor, Base: limitLatency}}

func adaptiveLimit(seed uint64) []LimitConfig {
	c := LimitConfig{Seed: seed, Duration: limitDuration, Rate: limitRate, Dependency: limitDependency, Timeout: limitTimeout}
	small, large, adapt := c, c, c
	small.Name = fmt.Sprintf("adaptive-limit/bulkhead-%d", limitSmall)
	small.Bulkhead = &bulkhead.Config{MaxConcurrent: limitSmall}
	large.Name = fmt.Sprintf("adaptive-limit/bulkhead-%d", limitLarge)
	large.Bulkhead = &bulkhead.Config{MaxConcurrent: limitLarge}
	adapt.Name = "adaptive-limit/adaptive"
	adapt.Adaptive = &adaptive.Config{}
	return []LimitConfig{small, large, adapt}
}

// adaptiveLimitSummary states the served counts the claim compares.
func adaptiveLimitSummary(rs []*LimitReport) string {
	var b strings.Builder
	if len(rs) == 0 {
		return ""
	}
	after := limitTo + (limitTo - limitFrom)
	fmt.Fprintf(&b, "served during the brownout [%s, %s) of %d offered, and in the %s after it of %d:\n",
		seconds(limitFrom), seconds(limitTo), rs[0].OfferedIn(limitFrom, limitTo), seconds(after-limitTo), rs[0].OfferedIn(limitTo, after))
	for _, r := range rs {
		fmt.Fprintf(&b, "  %-28s %6d %6d\n", r.Name, r.ServedIn(limitFrom, limitTo), r.ServedIn(limitTo, after))
	}
	return b.String()
}

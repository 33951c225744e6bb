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

// adaptiveLimitScenario is the built-in scenario of concurrency limits.
func adaptiveLimitScenario() Scenario {
	return Scenario{
		Name: "adaptive-limit",
		Claim: "during a brownout an adaptive limit finds what the dependency can serve and serves more than a small fixed bulkhead, " +
			"while a large one lets the dependency's queue grow until every call times out; afterwards the adaptive limit lets the whole load through again",
		Variants: adaptiveLimit,
		Compare: func(rs []*Report) []chart.Chart {
			return []chart.Chart{
				compareSeconds("served per second", "served calls", rs, func(s Second) float64 { return float64(s.Served) }),
				compareSeconds("calls the dependency holds", "attempts working or queued inside it (peak)", rs,
					func(s Second) float64 { return float64(s.Held) }),
				compareSeconds("limit", "calls allowed in flight", rs, func(s Second) float64 { return float64(s.Limit) }),
				compareSeconds("median latency of served calls", "ms", rs, func(s Second) float64 {
					if s.Served == 0 {
						return math.NaN()
					}
					return float64(s.P50) / float64(time.Millisecond)
				}),
			}
		},
		Summary: adaptiveLimitSummary,
	}
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

func adaptiveLimit(seed uint64) []Config {
	c := Config{Seed: seed, Duration: limitDuration, Rate: limitRate, Dependency: limitDependency, Client: Client{AttemptTimeout: limitTimeout}}
	small, large, adapt := c, c, c
	small.Name = fmt.Sprintf("adaptive-limit/bulkhead-%d", limitSmall)
	small.Client.Limit = &Limit{Bulkhead: &bulkhead.Config{MaxConcurrent: limitSmall}}
	large.Name = fmt.Sprintf("adaptive-limit/bulkhead-%d", limitLarge)
	large.Client.Limit = &Limit{Bulkhead: &bulkhead.Config{MaxConcurrent: limitLarge}}
	adapt.Name = "adaptive-limit/adaptive"
	adapt.Client.Limit = &Limit{Adaptive: &adaptive.Config{}}
	return []Config{small, large, adapt}
}

// adaptiveLimitSummary states the served counts the claim compares.
func adaptiveLimitSummary(rs []*Report) string {
	var b strings.Builder
	if len(rs) == 0 {
		return ""
	}
	after := limitTo + (limitTo - limitFrom)
	fmt.Fprintf(&b, "served during the brownout [%s, %s) of %d offered, and in the %s after it of %d:\n",
		seconds(limitFrom), seconds(limitTo), offeredSeconds(rs[0], limitFrom, limitTo), seconds(after-limitTo), offeredSeconds(rs[0], limitTo, after))
	for _, r := range rs {
		fmt.Fprintf(&b, "  %-28s %6d %6d\n", r.Name, r.ServedIn(limitFrom, limitTo), r.ServedIn(limitTo, after))
	}
	return b.String()
}

// compareSeconds overlays one per-second series of every report, over the
// runs' time with their faults shaded.
func compareSeconds(title, ylabel string, rs []*Report, series func(Second) float64) chart.Chart {
	return compare(title, ylabel, rs, 0, func(r *Report) []float64 {
		v := make([]float64, len(r.Seconds))
		for i, s := range r.Seconds {
			v[i] = series(s)
		}
		return v
	})
}

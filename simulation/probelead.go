package simulation

import (
	"fmt"
	"strings"
	"time"

	"github.com/resilience-go/pipeline/policy/breaker"
)

// The probe lead: one process, 10 calls a second for an hour, through a
// default breaker (no ramp), against the default healthy dependency (median
// 20 ms, p99 100 ms: a heavy tail, p99 = 5 x p50) that fails fast for one
// second every 90 s after a two-minute warm-up. Every outage trips the
// breaker, and every break ends in half-open phases whose probes meet the
// dependency as it is then: healthy, or, in the brownout variants, slowed 3 or
// 10 times for the 50 s after each outage (long enough for a first break and a
// doubled one), healthy again for the 39 s before the next. What is counted is
// the half-open phases that ended within leadSlow of an outage's end (all of
// them in the brownout variants' brownouts) and, of those, the ones that
// re-opened the breaker on slow probes. Each dependency runs twice: with the
// default lead of 2 (Config.ProbeSuccesses), and with 1, which judges each
// probe alone.
const (
	leadRate     = 10
	leadWarmup   = 2 * time.Minute // the measured normal fills before the first outage
	leadEvery    = 90 * time.Second
	leadOutage   = time.Second
	leadSlow     = 50 * time.Second // the brownout after each outage
	leadDuration = time.Hour
)

// leadDependency is the healthy dependency, failing fast for leadOutage every
// leadEvery after the warm-up and, if factor is not 0, browned out by factor
// for leadSlow after each outage.
func leadDependency(factor float64) Model {
	var m Model = Healthy{}
	for at := leadWarmup; at+leadEvery <= leadDuration; at += leadEvery {
		if factor != 0 {
			m = Brownout{Base: m, From: at + leadOutage, To: at + leadOutage + leadSlow, Factor: factor}
		}
		m = Outage{Base: m, From: at, To: at + leadOutage}
	}
	return m
}

func probeLead(seed uint64) []Config {
	var cs []Config
	for _, dep := range []struct {
		name   string
		factor float64
	}{{"healthy", 0}, {"brownout-3x", 3}, {"brownout-10x", 10}} {
		for _, lead := range []int{2, 1} {
			cs = append(cs, Config{
				Name:       fmt.Sprintf("probe-lead/%s/lead-%d", dep.name, lead),
				Seed:       seed,
				Duration:   leadDuration,
				Rate:       leadRate,
				Dependency: leadDependency(dep.factor),
				Client:     Client{Breaker: &breaker.Config{ProbeSuccesses: lead}},
			})
		}
	}
	return cs
}

// leadPhases counts r's half-open phases that ended within leadSlow of an
// outage's end, and those of them that re-opened on slow probes.
func leadPhases(r *Report) (phases, slow int) {
	for _, p := range r.Phases {
		since := p.At - leadWarmup
		if since < 0 || since%leadEvery < leadOutage || since%leadEvery >= leadOutage+leadSlow {
			continue
		}
		phases++
		if p.Cause == breaker.CauseProbeSlow {
			slow++
		}
	}
	return phases, slow
}

// probeLeadSummary states, per variant, the share of half-open phases that
// re-opened on slow probes.
func probeLeadSummary(rs []*Report) string {
	var b strings.Builder
	fmt.Fprintf(&b, "half-open phases ending within %v of an outage that re-opened on slow probes:\n", leadSlow)
	for _, r := range rs {
		phases, slow := leadPhases(r)
		fmt.Fprintf(&b, "  %-34s %4d of %4d (%.2f%%)\n", r.Name, slow, phases, 100*float64(slow)/float64(max(phases, 1)))
	}
	return b.String()
}

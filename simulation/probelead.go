package simulation

import (
	"fmt"
	"strings"
	"time"

	"github.com/resilience-go/pipeline/policy/breaker"
)

// The probe rule: one process, 10 calls a second for an hour, through a
// breaker with no ramp, against the default healthy dependency (median 20 ms,
// p99 100 ms: a heavy tail, p99 = 5 x p50) that fails fast for one second at
// regular intervals after a two-minute warm-up. Every outage trips the
// breaker, and every break ends in half-open phases whose probes meet the
// dependency as it is then: healthy, or, in the brownout variants, slowed 3, 4
// or 10 times for the 50 s after each outage (long enough for a first break
// and a doubled one). What is counted is the half-open phases that ended
// within leadSlow of an outage's end (all of them in the brownout variants'
// brownouts) and, of those, the ones that re-opened the breaker on slow
// probes. Each dependency runs under three probe rules (leadRules).
//
// The outages of a healthy dependency come every 90 s, for many phases. Those
// of a browned-out one come every 6 min, longer than the measured normal's
// 5-minute window, so that each brownout is judged against the dependency's
// healthy normal: "3 times slower than normal". The drift variant browns out 3
// times every 90 s, so that the brownouts fill most of the window, and shows
// what judging against a normal that has itself moved does.
const (
	leadRate     = 10
	leadWarmup   = 2 * time.Minute // the measured normal fills before the first outage
	leadOutage   = time.Second
	leadSlow     = 50 * time.Second // the brownout after each outage
	leadDuration = time.Hour
)

// leadDependencies are the dependencies of the scenario, by name: healthy,
// and browned out by factor after every outage, the outages every every.
var leadDependencies = []struct {
	name   string
	factor float64
	every  time.Duration
}{
	{"healthy", 0, 90 * time.Second},
	{"brownout-3x", 3, 6 * time.Minute},
	{"brownout-4x", 4, 6 * time.Minute},
	{"brownout-10x", 10, 6 * time.Minute},
	{"brownout-3x-drift", 3, 90 * time.Second},
}

// leadRules are the probe rules the scenario compares, by name.
var leadRules = []struct {
	name string
	cfg  breaker.Config
}{
	// The default: fast probes leading by 2 close, slow ones leading by 4
	// re-open, a probe is slow above 0.7 of the slow-call threshold.
	{"default", breaker.Config{}},
	// The rule the default replaced: a lead of 2 either way, probes judged
	// against the threshold itself.
	{"lead-2", breaker.Config{ProbeSlowLead: 2, ProbeSlowFraction: 1}},
	// The first probe decides alone.
	{"alone", breaker.Config{ProbeSuccesses: 1, ProbeSlowLead: 1, ProbeSlowFraction: 1}},
}

// leadDependency is the healthy dependency, failing fast for leadOutage every
// every after the warm-up and, if factor is not 0, browned out by factor for
// leadSlow after each outage.
func leadDependency(factor float64, every time.Duration) Model {
	var m Model = Healthy{}
	for at := leadWarmup; at+every <= leadDuration; at += every {
		if factor != 0 {
			m = Brownout{Base: m, From: at + leadOutage, To: at + leadOutage + leadSlow, Factor: factor}
		}
		m = Outage{Base: m, From: at, To: at + leadOutage}
	}
	return m
}

func probeLead(seed uint64) []Config {
	var cs []Config
	for _, dep := range leadDependencies {
		for _, rule := range leadRules {
			cfg := rule.cfg
			cs = append(cs, Config{
				Name:       leadName(dep.name, rule.name),
				Seed:       seed,
				Duration:   leadDuration,
				Rate:       leadRate,
				Dependency: leadDependency(dep.factor, dep.every),
				Client:     Client{Breaker: &cfg},
			})
		}
	}
	return cs
}

// leadName names the variant of a dependency and a rule.
func leadName(dependency, rule string) string { return "probe-lead/" + dependency + "/" + rule }

// leadEvery returns the interval between the outages of the variant called
// name, and 0 for a name that is not one.
func leadEvery(name string) time.Duration {
	for _, dep := range leadDependencies {
		if strings.HasPrefix(name, leadName(dep.name, "")) {
			return dep.every
		}
	}
	return 0
}

// leadPhases counts r's half-open phases that ended within leadSlow of an
// outage's end, and those of them that re-opened on slow probes.
func leadPhases(r *Report) (phases, slow int) {
	every := leadEvery(r.Name)
	if every == 0 {
		return 0, 0
	}
	for _, p := range r.Phases {
		since := p.At - leadWarmup
		if since < 0 || since%every < leadOutage || since%every >= leadOutage+leadSlow {
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
// re-opened on slow probes, and the probes per half-open phase over the whole
// run (for the healthy dependency, the cost of a healthy recovery).
func probeLeadSummary(rs []*Report) string {
	var b strings.Builder
	fmt.Fprintf(&b, "half-open phases ending within %v of an outage that re-opened on slow probes, and probes per phase:\n", leadSlow)
	for _, r := range rs {
		phases, slow := leadPhases(r)
		fmt.Fprintf(&b, "  %-36s %4d of %4d (%6.2f%%)  %.2f probes per phase\n", r.Name, slow, phases,
			100*float64(slow)/float64(max(phases, 1)), float64(r.Probes)/float64(max(len(r.Phases), 1)))
	}
	return b.String()
}

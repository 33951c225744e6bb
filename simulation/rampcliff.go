package simulation

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/resilience-go/pipeline/simulation/chart"

	"github.com/resilience-go/pipeline/policy/breaker"
)

// The ramp against the cliff: one process, 30 calls a second, one attempt per
// call, through a default breaker, against a Capacity dependency that serves
// 100 attempts a second when warm and 20 when cold, and goes cold after about
// 6 s without traffic (a second judged by its last load, then a 5 s
// Cooldown). It is out from 30 s to 35 s; the run ends 45 s after that, and
// what is compared is the calls offered in those 45 s that were served. The
// variants differ only in the breaker's Recovery: nil (the cliff), the ramp
// alone (no trickle during the break: the seed's ramp), and
// &breaker.Recovery{} (the ramp and the trickle, every default).
const (
	rampCapacity = 100              // attempts a second, warm; defaultCold x 100 = 20 cold
	rampRate     = 30               // calls a second: 1.5 x the cold capacity, 0.3 x the warm one
	rampCooldown = 5 * time.Second  // cold within 6 s idle: before the shortest break (7.5 s)
	rampFrom     = 30 * time.Second // the outage
	rampTo       = 35 * time.Second
	rampWindow   = 45 * time.Second // counted from the outage's end
)

// rampDependency is the scenario's dependency: a warm Capacity with a short
// memory, out for five seconds.
var rampDependency = Outage{From: rampFrom, To: rampTo, Base: Capacity{Rate: rampCapacity, Cooldown: rampCooldown}}

func rampVsCliff(seed uint64) []Config {
	variant := func(name string, r *breaker.Recovery) Config {
		return Config{
			Name:       name,
			Seed:       seed,
			Duration:   rampTo + rampWindow,
			Rate:       rampRate,
			Dependency: rampDependency,
			Client:     Client{Breaker: &breaker.Config{Recovery: r}},
		}
	}
	return []Config{
		variant("ramp-vs-cliff/cliff", nil),
		variant("ramp-vs-cliff/ramp-alone", &breaker.Recovery{TrickleEvery: -1}),
		variant("ramp-vs-cliff/ramp", &breaker.Recovery{}),
	}
}

// servedAfterOutage is what the scenario compares: the calls offered in the
// 45 s after the outage ends, [35 s, 80 s), that were served.
func servedAfterOutage(r *Report) int { return r.ServedIn(rampTo, rampTo+rampWindow) }

// rampVsCliffSummary states the served counts the claim compares.
func rampVsCliffSummary(rs []*Report) string {
	var b strings.Builder
	offered := 0
	if len(rs) > 0 {
		offered = offeredSeconds(rs[0], rampTo, rampTo+rampWindow)
	}
	fmt.Fprintf(&b, "served over the %s after the outage (calls offered in [%s, %s) and served, of %d offered):\n",
		seconds(rampWindow), seconds(rampTo), seconds(rampTo+rampWindow), offered)
	for i, r := range rs {
		fmt.Fprintf(&b, "  %-22s %5d", r.Name, servedAfterOutage(r))
		if i > 0 {
			fmt.Fprintf(&b, " (%.2f x the first)", ratio(servedAfterOutage(r), servedAfterOutage(rs[0])))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// offeredSeconds sums the calls offered over the whole seconds in [from, to).
func offeredSeconds(r *Report, from, to time.Duration) int {
	n := 0
	for i := int(from / time.Second); i < int(to/time.Second) && i < len(r.Seconds); i++ {
		n += r.Seconds[i].Offered
	}
	return n
}

// rampVsCliffCharts overlays the variants' served calls and the share of
// calls their breakers admitted, per second, and draws the ramp's admitted
// fraction with the share of offers slow calls held it.
func rampVsCliffCharts(rs []*Report) []chart.Chart {
	charts := []chart.Chart{
		compare("served per second", "served calls", rs, 1, servedPerSecond),
		compare("share of calls the breaker admitted", "admitted / offered", rs, 1, admittedShare),
	}
	for _, r := range rs {
		if r.Ramping {
			charts = append(charts, rampShares(r))
		}
	}
	return charts
}

// admittedShare is, per second, the share of the calls offered that the
// breakers did not refuse: 0 while open, 1 while closed, the ramp's fraction
// while recovering. NaN (not drawn) in the seconds without calls.
func admittedShare(r *Report) []float64 {
	v := make([]float64, len(r.Seconds))
	for i, s := range r.Seconds {
		v[i] = 1 - ratio(s.RefusedByBreaker, s.Offered)
		if s.Offered == 0 {
			v[i] = math.NaN()
		}
	}
	return v
}

// rampShares draws r's recovery ramps second by second: the fraction admitted
// and the share of offers made while slow calls held the ramp, as means
// over the attempts offered to a ramp in the second; NaN (not drawn) outside
// ramps.
func rampShares(r *Report) chart.Chart {
	pick := func(f func(Second) float64) []float64 {
		v := make([]float64, len(r.Seconds))
		for i, s := range r.Seconds {
			v[i] = f(s)
			if s.Ramping == 0 {
				v[i] = math.NaN()
			}
		}
		return v
	}
	return chart.Chart{
		Title: "the ramp's admitted fraction, and how often slow calls held it (" + strings.TrimPrefix(r.Name, "ramp-vs-cliff/") + ")", XLabel: "time (s)", YLabel: "fraction (mean over the second)",
		End: r.Duration.Seconds(), Bands: FaultBands(r.Faults),
		Lines: []chart.Line{
			{Name: "admitted fraction", Values: pick(func(s Second) float64 { return s.RampFraction })},
			{Name: "share of offers held by slow calls", Values: pick(func(s Second) float64 { return s.RampHeld })},
		},
	}
}

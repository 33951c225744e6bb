package simulation

import (
	"fmt"
	"math"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/resilience-go/pipeline/internal/breakerconf"
	"github.com/resilience-go/pipeline/internal/hedgerule"
	"github.com/resilience-go/pipeline/policy/breaker"
)

// The figures of docs/simulation.md that span many seeds come from these
// tests. They print and assert nothing (the scenario tests hold the claims),
// and run only when asked, since they take a while:
//
//	PIPELINE_TABLES=1 go test -run TestTables -v ./simulation

func tables(t *testing.T) {
	if os.Getenv("PIPELINE_TABLES") == "" {
		t.Skip("set PIPELINE_TABLES=1 to print the figures of docs/simulation.md")
	}
}

// spread formats the lowest, median and highest of xs.
func spread(xs []float64, format string) string {
	slices.Sort(xs)
	f := func(x float64) string { return fmt.Sprintf(format, x) }
	return f(xs[0]) + " to " + f(xs[len(xs)-1]) + " (median " + f(xs[len(xs)/2]) + ")"
}

func TestTablesHedging(t *testing.T) {
	tables(t)
	model := fitted(hedgingLatency)
	p95 := model.quantile(hedgerule.DefaultQuantile)
	stable := model.settledDelay(p95, hedgerule.DefaultQuantile)
	t.Logf("model p95 %v; stable delay from above %v, from below %v; P(L > stable) %.4f, P(L > 0.8 stable) %.4f",
		p95, stable, model.settledDelay(p95*8/10, hedgerule.DefaultQuantile), model.survival(stable), model.survival(stable*8/10))
	var delay, extra, p99, bare []float64
	for seed := uint64(1); seed <= 10; seed++ {
		cs := hedging(seed)
		without, err := Run(cs[0])
		if err != nil {
			t.Fatal(err)
		}
		with, err := Run(cs[1])
		if err != nil {
			t.Fatal(err)
		}
		delay = append(delay, float64(with.HedgeDelay)/1e6)
		extra = append(extra, 100*float64(with.HedgesSent)/float64(with.Offered))
		p99 = append(p99, float64(with.P99)/1e6)
		bare = append(bare, float64(without.P99)/1e6)
	}
	t.Logf("seeds 1 to 10, a minute: delay %s ms, extra load %s%%, p99 %s ms, without the hedge %s ms",
		spread(delay, "%.1f"), spread(extra, "%.1f"), spread(p99, "%.0f"), spread(bare, "%.0f"))
	delay, extra = nil, nil
	for seed := uint64(1); seed <= 5; seed++ {
		c := hedging(seed)[1]
		c.Duration = 10 * time.Minute
		r, err := Run(c)
		if err != nil {
			t.Fatal(err)
		}
		delay = append(delay, float64(r.HedgeDelay)/1e6)
		extra = append(extra, 100*float64(r.HedgesSent)/float64(r.Offered))
	}
	t.Logf("seeds 1 to 5, ten minutes: delay %s ms, extra load %s%%", spread(delay, "%.1f"), spread(extra, "%.2f"))
}

func TestTablesSlowCallTrip(t *testing.T) {
	tables(t)
	var took, fixedTook, peak, before, during []float64
	stayOpen := []uint64{}
	for seed := uint64(1); seed <= 30; seed++ {
		rs, err := lookup("slow-call-trip")
		if !err {
			t.Fatal("no scenario")
		}
		reports, runErr := rs.Run(seed)
		if runErr != nil {
			t.Fatal(runErr)
		}
		median, chased, fixed := reports[0], reports[1], reports[2]
		took = append(took, (median.FirstOpen - slowFrom).Seconds())
		if last := median.Seconds[len(median.Seconds)-1]; last.Served < last.Offered {
			stayOpen = append(stayOpen, seed)
		}
		if seed > 20 {
			continue
		}
		fixedTook = append(fixedTook, (fixed.FirstOpen - slowFrom).Seconds())
		p := 0.0
		for _, s := range chased.Seconds[slowFrom/time.Second:] {
			p = max(p, s.SlowFraction)
		}
		peak = append(peak, p)
		before = append(before, 100*meanSlowFraction(chased, 30*time.Second, slowFrom))
		during = append(during, 100*meanSlowFraction(chased, slowTo-15*time.Second, slowTo))
		if seed == 1 {
			_, trs := withTransitions(t, rs.Variants(1)[0])
			closed := time.Duration(0)
			for _, tr := range trs {
				if tr.To == breaker.Closed {
					closed = at(tr)
				}
			}
			t.Logf("seed 1: median threshold before the brownout %v, when it opened %v; last closed at %v; chased mean slow %% before %.2f, last 15 s %.2f",
				median.Seconds[slowFrom/time.Second-1].Threshold, median.Seconds[median.FirstOpen/time.Second].Threshold, closed, before[0], during[0])
		}
	}
	t.Logf("median opened, seeds 1 to 30: %s s", spread(took, "%.2f"))
	t.Logf("fixed p99 opened, seeds 1 to 20: %s s", spread(fixedTook, "%.2f"))
	t.Logf("chased p99, seeds 1 to 20: peak %s; mean slow %% before %s, in the last 15 s %s", spread(peak, "%.3f"), spread(before, "%.2f"), spread(during, "%.2f"))
	t.Logf("median variant refusing calls at the end of the run, seeds 1 to 30: %v", stayOpen)
}

func TestTablesRampVsCliff(t *testing.T) {
	tables(t)
	var ratios, withTrickle, lengths, clocks []float64
	var slowProbes []uint64 // seeds whose cliff re-opened on slow probes
	failed := 0
	for seed := uint64(1); seed <= 30; seed++ {
		cs := rampVsCliff(seed)
		cliff, cliffTrs := withTransitions(t, cs[0])
		for _, tr := range cliffTrs {
			if tr.Cause == breaker.CauseProbeSlow {
				slowProbes = append(slowProbes, seed)
				break
			}
		}
		ramp, trs := withTransitions(t, cs[1]) // the ramp alone
		trickled, _ := withTransitions(t, cs[2])
		ratios = append(ratios, float64(servedAfterOutage(ramp))/float64(servedAfterOutage(cliff)))
		withTrickle = append(withTrickle, float64(servedAfterOutage(trickled))/float64(servedAfterOutage(cliff)))
		failed += ramp.RampsFailed + trickled.RampsFailed
		var opened, started, done breaker.Transition
		for _, tr := range trs {
			switch {
			case tr.To == breaker.Open:
				opened = tr
			case tr.To == breaker.Recovering:
				started = tr
			case tr.From == breaker.Recovering:
				done = tr
			}
		}
		if done.Cause == breaker.CauseRampDone {
			lengths = append(lengths, (at(done) - at(started)).Seconds())
			clocks = append(clocks, max(breakerconf.DefaultRecoveryFraction*(at(started)-at(opened)).Seconds(), 1))
		}
		if seed == 1 {
			t.Logf("seed 1: cliff %d, ramp alone %d, ramp with the trickle %d of %d; the ramp alone from %v to %v", servedAfterOutage(cliff), servedAfterOutage(ramp), servedAfterOutage(trickled), rampRate*int(rampWindow/time.Second), at(started), at(done))
		}
	}
	t.Logf("seeds 1 to 30: ramp alone / cliff %s, with the trickle %s; ramps re-opened %d; the ramps alone took %s s for lengths of %s s; cliffs re-opened on slow probes: seeds %v",
		spread(ratios, "%.1f"), spread(withTrickle, "%.1f"), failed, spread(lengths, "%.1f"), spread(clocks, "%.1f"), slowProbes)
}

// TestTablesRampVariants prints the table of the ramp-vs-cliff scenario with
// one thing changed, over seeds 1 to 20.
func TestTablesRampVariants(t *testing.T) {
	tables(t)
	onBase := func(f func(cp *Capacity)) func(c *Config) {
		return func(c *Config) {
			o := c.Dependency.(Outage)
			cp := o.Base.(Capacity)
			f(&cp)
			o.Base = cp
			c.Dependency = o
		}
	}
	tight := onBase(func(cp *Capacity) { cp.Base = Healthy{P50: defaultP50, P99: 40 * time.Millisecond} })
	noJitter := func(c *Config) { c.Client.Breaker.BreakJitter = breaker.JitterNone }
	rate := func(r float64) func(c *Config) { return func(c *Config) { c.Rate = r } }
	both := func(fs ...func(c *Config)) func(c *Config) {
		return func(c *Config) {
			for _, f := range fs {
				f(c)
			}
		}
	}
	fleet := func(n int, r float64) func(c *Config) { return func(c *Config) { c.Processes, c.Rate = n, r } }
	for _, v := range []struct {
		name string
		edit func(c *Config)
	}{
		{"none", func(*Config) {}},
		{"15 calls a second (under the cold capacity)", rate(15)},
		{"20 calls a second (the cold capacity)", rate(20)},
		{"24 calls a second", rate(24)},
		{"36 calls a second", rate(36)},
		{"40 calls a second", rate(40)},
		{"50 calls a second", rate(50)},
		{"60 calls a second", rate(60)},
		{"a tight tail (base p99 40 ms)", tight},
		{"a tight tail, 40 calls a second", both(tight, rate(40))},
		{"a heavy tail (base p99 200 ms)", onBase(func(cp *Capacity) { cp.Base = Healthy{P50: defaultP50, P99: 200 * time.Millisecond} })},
		{"`Cooldown` 10 s (the default)", onBase(func(cp *Capacity) { cp.Cooldown = 0 })},
		{"`Cooldown` 10 s, no break jitter", both(onBase(func(cp *Capacity) { cp.Cooldown = 0 }), noJitter)},
		{"`Warmup` 20 s", onBase(func(cp *Capacity) { cp.Warmup = 20 * time.Second })},
		{"`Warmup` 5 s", onBase(func(cp *Capacity) { cp.Warmup = 5 * time.Second })},
		{"ten times the rates (capacity 1,000, 300 calls a second)", both(rate(300), onBase(func(cp *Capacity) { cp.Rate = 1000 }))},
		{"3 processes of 10 calls a second", fleet(3, 10)},
		{"10 processes of 3 calls a second", fleet(10, 3)},
		{"10 processes of 3, no break jitter", both(fleet(10, 3), noJitter)},
		// The edges of the band the claim holds in, quoted in the prose.
		{"band: a tight tail, 38 calls a second", both(tight, rate(38))},
		{"band: 54 calls a second", rate(54)},
		{"band: 26 calls a second", rate(26)},
		{"band: a tight tail, 26 calls a second", both(tight, rate(26))},
		{"band: a tight tail, 24 calls a second", both(tight, rate(24))},
	} {
		var cliffs, ramps, trickled, ratios []float64
		holds, reopened := 0, 0
		for seed := uint64(1); seed <= 20; seed++ {
			var served [3]int
			for k, c := range rampVsCliff(seed) {
				bc := *c.Client.Breaker
				c.Client.Breaker = &bc
				v.edit(&c)
				r, err := Run(c)
				if err != nil {
					t.Fatal(err)
				}
				served[k] = servedAfterOutage(r)
				if k > 0 && r.RampsFailed > 0 {
					reopened++
				}
			}
			cliffs = append(cliffs, float64(served[0]))
			ramps = append(ramps, float64(served[1]))
			trickled = append(trickled, float64(served[2]))
			ratios = append(ratios, float64(served[1])/float64(served[0]))
			if served[1] > 2*served[0] {
				holds++
			}
		}
		mean := func(xs []float64) float64 {
			s := 0.0
			for _, x := range xs {
				s += x
			}
			return s / float64(len(xs))
		}
		slices.Sort(ratios)
		ratio := func(x float64) string {
			if x < 1 {
				return fmt.Sprintf("%.2f", x)
			}
			return fmt.Sprintf("%.1f", x)
		}
		t.Logf("| %s | %.0f | %.0f | %s, %s | %d | %.0f | %d |", v.name, mean(cliffs), mean(ramps), ratio(ratios[0]), ratio(ratios[len(ratios)/2]), holds, mean(trickled), reopened)
	}
}

// TestTablesProbeLead prints the probe-lead scenario's re-open rates over
// seeds 1 to 30, with their standard errors, and the probes per half-open
// phase.
func TestTablesProbeLead(t *testing.T) {
	tables(t)
	s, _ := lookup("probe-lead")
	phases, slow, probes, all := map[string]int{}, map[string]int{}, map[string]int{}, map[string]int{}
	var names []string
	for seed := uint64(1); seed <= 30; seed++ {
		rs, err := s.Run(seed)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			if seed == 1 {
				names = append(names, r.Name)
			}
			p, sl := leadPhases(r)
			phases[r.Name] += p
			slow[r.Name] += sl
			probes[r.Name] += r.Probes
			all[r.Name] += len(r.Phases)
		}
	}
	for _, name := range names {
		share := float64(slow[name]) / float64(phases[name])
		se := math.Sqrt(share * (1 - share) / float64(phases[name]))
		t.Logf("| %s | %d of %d | %.2f%% ± %.2f | %.2f |", name, slow[name], phases[name], 100*share, 100*se,
			float64(probes[name])/float64(all[name]))
	}
}

package simulation

import (
	"testing"
	"time"

	"github.com/resilience-go/pipeline/budget"
	"github.com/resilience-go/pipeline/policy/breaker"
)

// minuteAt200 is a simulated minute of 200 calls a second from one process
// through the whole card (deadline, attempt timeout, retry, budget, breaker)
// against a dependency with a 5 s outage.
func minuteAt200() Config {
	return Config{
		Duration:   time.Minute,
		Rate:       200,
		Dependency: Outage{From: 20 * time.Second, To: 25 * time.Second},
		Client: Client{
			Breaker:        &breaker.Config{},
			Budget:         &budget.Config{},
			Retry:          &Retry{},
			AttemptTimeout: 250 * time.Millisecond,
			Deadline:       time.Second,
		},
	}
}

// benchConfig runs c b.N times and reports the time per offered call.
func benchConfig(b *testing.B, c Config) {
	b.ReportAllocs()
	var r *Report
	for b.Loop() {
		var err error
		if r, err = Run(c); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(r.Offered), "ns/call")
}

// benchScenario runs each variant of the named scenario as a sub-benchmark, or
// only variant i if i >= 0.
func benchScenario(b *testing.B, name string, i int) {
	s, ok := lookup(name)
	if !ok {
		b.Fatalf("no scenario %q", name)
	}
	variants := s.Variants(DefaultSeed)
	if i >= 0 {
		benchConfig(b, variants[i])
		return
	}
	for _, c := range variants {
		b.Run(c.Name[len(s.Name)+1:], func(b *testing.B) { benchConfig(b, c) })
	}
}

func BenchmarkMinuteAt200PerSecond(b *testing.B) { benchConfig(b, minuteAt200()) }

// BenchmarkMinuteAt200PerSecondHedged is the same minute with the default hedge
// in the card, against the default healthy dependency (p99 five times the
// median), so that about one attempt in twenty is hedged.
func BenchmarkMinuteAt200PerSecondHedged(b *testing.B) {
	c := minuteAt200()
	c.Client.Hedge = &Hedge{}
	benchConfig(b, c)
}

// BenchmarkSynchronizedProbe runs the synchronized probe with break jitter.
func BenchmarkSynchronizedProbe(b *testing.B) { benchScenario(b, "synchronized-probe", 1) }

// BenchmarkHedgingScenario runs the hedging scenario's hedged variant.
func BenchmarkHedgingScenario(b *testing.B) { benchScenario(b, "hedging", 1) }

// BenchmarkSlowCallTripScenario runs each variant of the slow-call-trip
// scenario: three simulated minutes of 100 calls a second through a breaker,
// every attempt judged (by the breaker's own threshold, read from a Snapshot,
// or by a live p99).
func BenchmarkSlowCallTripScenario(b *testing.B) { benchScenario(b, "slow-call-trip", -1) }

// BenchmarkRampVsCliffScenario runs each variant of the ramp-vs-cliff
// scenario: 80 simulated seconds of 30 calls a second through a breaker, the
// ramp's attempts each preceded by a Snapshot of the recovering breaker.
func BenchmarkRampVsCliffScenario(b *testing.B) { benchScenario(b, "ramp-vs-cliff", -1) }

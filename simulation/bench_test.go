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

func BenchmarkMinuteAt200PerSecond(b *testing.B) {
	b.ReportAllocs()
	c := minuteAt200()
	var r *Report
	for b.Loop() {
		var err error
		if r, err = Run(c); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(r.Offered), "ns/call")
}

func BenchmarkSynchronizedProbe(b *testing.B) {
	b.ReportAllocs()
	s, _ := Lookup("synchronized-probe")
	c := s.Variants(DefaultSeed)[1]
	for b.Loop() {
		if _, err := Run(c); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMinuteAt200PerSecondHedged is the same minute with the default hedge
// in the card, against the default healthy dependency (p99 five times the
// median), so that about one attempt in twenty is hedged.
func BenchmarkMinuteAt200PerSecondHedged(b *testing.B) {
	b.ReportAllocs()
	c := minuteAt200()
	c.Client.Hedge = &Hedge{}
	var r *Report
	for b.Loop() {
		var err error
		if r, err = Run(c); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(r.Offered), "ns/call")
}

func BenchmarkHedgingScenario(b *testing.B) {
	b.ReportAllocs()
	s, _ := Lookup("hedging")
	c := s.Variants(DefaultSeed)[1]
	for b.Loop() {
		if _, err := Run(c); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSlowCallTripScenario runs each variant of the slow-call-trip
// scenario: three simulated minutes of 100 calls a second through a breaker,
// every attempt judged (by the breaker's own threshold, read from a Snapshot,
// or by a live p99).
func BenchmarkSlowCallTripScenario(b *testing.B) {
	s, _ := Lookup("slow-call-trip")
	for _, c := range s.Variants(DefaultSeed) {
		b.Run(c.Name[len(s.Name)+1:], func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Run(c); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRampVsCliffScenario runs each variant of the ramp-vs-cliff
// scenario: 80 simulated seconds of 30 calls a second through a breaker, the
// ramp's attempts each preceded by a Snapshot of the recovering breaker.
func BenchmarkRampVsCliffScenario(b *testing.B) {
	s, _ := Lookup("ramp-vs-cliff")
	for _, c := range s.Variants(DefaultSeed) {
		b.Run(c.Name[len(s.Name)+1:], func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Run(c); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

package adaptive_test

import (
	"math"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"pgregory.net/rapid"

	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/adaptive"
)

// TestTheLimitHoldsWhateverTheLatency drives a limiter with random calls:
// random numbers at once, latencies, outcomes and pauses. After every step it
// checks that the limit stays within its bounds, that a slot is handed out
// exactly while fewer calls than the limit are inside, and that every
// revision moved the limit as its kind says: growth by at most its square
// root, a cut for a queue to between half and four fifths, a cut for
// throttling to four fifths, and nothing otherwise.
func TestTheLimitHoldsWhateverTheLatency(t *testing.T) {
	seen := map[adaptive.Why]int{}
	rapid.Check(t, func(t *rapid.T) {
		clock := clockwork.NewFakeClock()
		cfg := adaptive.Config{
			MinLimit:   rapid.IntRange(1, 5).Draw(t, "min"),
			MaxLimit:   rapid.IntRange(5, 60).Draw(t, "max"),
			MinSamples: rapid.IntRange(1, 10).Draw(t, "minSamples"),
			Interval:   time.Duration(rapid.IntRange(100, 1000).Draw(t, "intervalMs")) * time.Millisecond,
			Clock:      clock,
		}
		l, err := adaptive.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		var held []adaptive.Ticket
		last := l.Snapshot().Last
		check := func() {
			s := l.Snapshot()
			if s.Limit < cfg.MinLimit || s.Limit > cfg.MaxLimit {
				t.Fatalf("limit %d outside [%d, %d]", s.Limit, cfg.MinLimit, cfg.MaxLimit)
			}
			if s.InFlight != len(held) {
				t.Fatalf("%d in flight, %d held", s.InFlight, len(held))
			}
			r := s.Last
			if r.At == last.At {
				return
			}
			last = r
			seen[r.Why]++
			from, to := float64(r.From), float64(r.To)
			switch r.Why {
			case adaptive.Grew:
				if to < from || to > from+1+math.Max(1, math.Sqrt(from+1)) {
					t.Fatalf("grew from %d to %d", r.From, r.To)
				}
			case adaptive.Queued:
				if r.To != cfg.MinLimit && (to > 0.8*(from+1) || to < 0.5*from-1) {
					t.Fatalf("cut for a queue from %d to %d", r.From, r.To)
				}
				if float64(r.Recent) <= 1.5*float64(r.Baseline) {
					t.Fatalf("cut for a queue with a recent latency %v and a baseline %v", r.Recent, r.Baseline)
				}
			case adaptive.Throttled:
				if r.To != cfg.MinLimit && (to > 0.8*(from+1) || to < 0.8*from-1) {
					t.Fatalf("cut for throttling from %d to %d", r.From, r.To)
				}
			default:
				if r.To != r.From {
					t.Fatalf("%v moved the limit from %d to %d", r.Why, r.From, r.To)
				}
			}
		}
		verdicts := []outcome.Verdict{{}, {}, {}, {Kind: outcome.Transient}, {Kind: outcome.Throttled}, {Kind: outcome.Permanent, Canceled: true}}
		steps := rapid.IntRange(1, 200).Draw(t, "steps")
		for range steps {
			switch rapid.IntRange(0, 2).Draw(t, "op") {
			case 0: // calls arrive
				for range rapid.IntRange(1, 20).Draw(t, "arrivals") {
					before := l.Snapshot()
					tk, ok := l.TryAcquire()
					if ok != (before.InFlight < before.Limit) {
						t.Fatalf("TryAcquire = %v with %d in flight and a limit of %d", ok, before.InFlight, before.Limit)
					}
					if ok {
						held = append(held, tk)
					}
				}
			case 1: // time passes
				clock.Advance(time.Duration(rapid.Int64Range(0, int64(2*time.Second)).Draw(t, "advance")))
			case 2: // calls end
				n := rapid.IntRange(0, len(held)).Draw(t, "ends")
				for _, tk := range held[:n] {
					l.Done(tk, rapid.SampledFrom(verdicts).Draw(t, "verdict"))
				}
				held = held[n:]
			}
			check()
		}
	})
	if !t.Failed() {
		for _, why := range []adaptive.Why{adaptive.Grew, adaptive.Queued, adaptive.Throttled} {
			if seen[why] == 0 {
				t.Errorf("no revision of kind %v: the cases missed a path (%v)", why, seen)
			}
		}
	}
}

package adaptive_test

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"pgregory.net/rapid"

	"github.com/resilience-go/pipeline"
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
		verdicts := []outcome.Verdict{{}, {}, {}, {Kind: outcome.Transient}, {Kind: outcome.Permanent, Canceled: true}}
		if rapid.Bool().Draw(t, "throttles") {
			// A throttled interval cuts before latency is looked at, so only
			// some cases have them: the others reach the latency rules.
			verdicts = append(verdicts, outcome.Verdict{Kind: outcome.Throttled})
		}
		steps := rapid.IntRange(1, 200).Draw(t, "steps")
		for range steps {
			switch rapid.IntRange(0, 2).Draw(t, "op") {
			case 0: // calls arrive
				for range rapid.IntRange(1, 20).Draw(t, "arrivals") {
					before := l.Snapshot()
					tk, ok := l.TryAcquire(context.Background())
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

// TestTheHintStaysWithinTheLatencies drives a limiter with random calls, as
// TestTheLimitHoldsWhateverTheLatency does, and checks the retry-after hint of
// every refusal against the successes measured so far. The hint is a median
// read from the estimator's histogram, so it lies in a bucket that holds one
// of the successes: no faster than the fastest over 2^(1/4) (a bucket's width,
// rounded up to 1.19 here) and no slower than the slowest times 2^(1/4),
// rounded up to the millisecond. A latency of 2^35 ns (34.36 s) and more counts
// in the top bucket, so no hint exceeds 34.36 s whatever the calls took. Some
// calls here are held for minutes, so that bound is exercised too.
func TestTheHintStaysWithinTheLatencies(t *testing.T) {
	const (
		width = 1.19 // above 2^(1/4), the ratio of a bucket's top to its bottom
		top   = time.Duration(1) << 35
		// topFloor is under the bottom of the top bucket, 2^34.75 ns (28.9 s):
		// the least a latency of top or more can read as.
		topFloor = 28 * time.Second
	)
	ceilMs := func(d time.Duration) time.Duration { return (d + time.Millisecond - 1).Truncate(time.Millisecond) }
	hinted, capped := 0, 0
	rapid.Check(t, func(t *rapid.T) {
		clock := clockwork.NewFakeClock()
		cfg := adaptive.Config{
			MaxLimit:   rapid.IntRange(1, 8).Draw(t, "max"),
			MinSamples: rapid.IntRange(1, 10).Draw(t, "minSamples"),
			Interval:   time.Duration(rapid.IntRange(100, 1000).Draw(t, "intervalMs")) * time.Millisecond,
			Clock:      clock,
		}
		l, err := adaptive.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		type call struct {
			tk    adaptive.Ticket
			began time.Time
		}
		var held []call
		fastest, slowest := time.Duration(math.MaxInt64), time.Duration(0) // of the successes so far
		verdicts := []outcome.Verdict{{}, {}, {}, {Kind: outcome.Transient}, {Kind: outcome.Permanent, Canceled: true}}
		if rapid.Bool().Draw(t, "throttles") {
			// A throttled interval cuts before latency is looked at, so only
			// some cases have them: the others reach the latency rules.
			verdicts = append(verdicts, outcome.Verdict{Kind: outcome.Throttled})
		}
		steps := rapid.IntRange(1, 200).Draw(t, "steps")
		for range steps {
			switch rapid.IntRange(0, 3).Draw(t, "op") {
			case 0: // calls arrive; with no queue, Acquire never waits
				for range rapid.IntRange(1, 10).Draw(t, "arrivals") {
					tk, err := l.Acquire(context.Background())
					if err == nil {
						held = append(held, call{tk, clock.Now()})
						continue
					}
					stop, ok := errors.AsType[*pipeline.StopError](err)
					if !ok || stop.Stage != "adaptive" || stop.Reason != pipeline.ConcurrencyLimited {
						t.Fatalf("Acquire: want a refusal of the limiter, got %v", err)
					}
					hint := stop.RetryAfter
					if hint == 0 {
						continue // no revision has read a median yet
					}
					hinted++
					if hint == ceilMs(top) {
						capped++
					}
					if slowest == 0 {
						t.Fatalf("a hint of %v before any success took time", hint)
					}
					most := ceilMs(min(time.Duration(width*float64(slowest))+1, top))
					least := time.Duration(float64(min(fastest, topFloor)) / width)
					if hint > most || hint < least {
						t.Fatalf("a hint of %v with successes from %v to %v: want it within [%v, %v]", hint, fastest, slowest, least, most)
					}
				}
			case 1: // time passes
				clock.Advance(time.Duration(rapid.Int64Range(0, int64(2*time.Second)).Draw(t, "advance")))
			case 2: // a long pause, which the calls inside measure
				clock.Advance(time.Duration(rapid.Int64Range(0, int64(90*time.Second)).Draw(t, "pause")))
			case 3: // calls end
				n := rapid.IntRange(0, len(held)).Draw(t, "ends")
				for _, c := range held[:n] {
					v := rapid.SampledFrom(verdicts).Draw(t, "verdict")
					if v.Kind == outcome.OK && !v.Canceled {
						took := clock.Since(c.began)
						fastest, slowest = min(fastest, took), max(slowest, took)
					}
					l.Done(c.tk, v)
				}
				held = held[n:]
			}
		}
	})
	if !t.Failed() && (hinted == 0 || capped == 0) {
		t.Errorf("%d refusals with a hint, %d of them at the 34.36 s cap: the cases missed a path", hinted, capped)
	}
}

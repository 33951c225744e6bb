package budget_test

import (
	"math"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/resilience-go/pipeline/budget"
	"github.com/resilience-go/pipeline/criticality"

	"github.com/resilience-go/pipeline/internal/testcheck"
)

// extremeFloats are the seeds of every float field: its edges and the values
// floating point gets wrong.
var extremeFloats = []float64{
	0, 1, -1, 0.1, 0.5, 1 + 1e-9, 1 - 1e-9, math.Copysign(0, -1), math.SmallestNonzeroFloat64,
	1e-300, 1e9, 1e9 + 1, 1e300, math.MaxFloat64, math.NaN(), math.Inf(1), math.Inf(-1),
	math.MaxInt32, math.MaxInt64, math.MinInt64,
}

// extremeDurations are the seeds of every duration field.
var extremeDurations = []int64{
	0, 1, -1, int64(time.Second), int64(10 * time.Second), int64(time.Hour),
	math.MaxInt32, math.MaxInt64, math.MinInt64,
}

// FuzzConfig checks budget.Config.Validate and the Budget a valid Config builds:
//
//   - Validate never panics, and returns nil exactly when New succeeds;
//   - its error names, as "Config.<Field>", a field the caller set (a zero field
//     means its default, so it is never to blame);
//   - a valid Config builds a full Budget with a Capacity in [1, MaxCapacity];
//   - under any sequence of Withdraw, Deposit, Refund and clock advances (ops),
//     Tokens stays finite and within [0, Capacity], Utilization within [0, 1];
//     Withdraw succeeds exactly when Tokens is at least 1, and a refused Withdraw
//     returns a positive wait after which the next Withdraw succeeds.
func FuzzConfig(f *testing.F) {
	for _, v := range extremeFloats {
		f.Add(v, 0.0, int64(0), 0.0, []byte{0, 1, 2, 3}, int64(time.Second))
		f.Add(0.0, v, int64(0), 0.0, []byte{0, 0, 0, 3}, int64(time.Millisecond))
		f.Add(0.0, 0.0, int64(0), v, []byte{0, 0, 1, 0, 2}, int64(1))
		f.Add(0.0, v, int64(0), 1.0, []byte{0, 0, 3, 0}, int64(1))
	}
	for _, d := range extremeDurations {
		f.Add(0.0, 0.0, d, 0.0, []byte{0, 3, 0}, d)
		f.Add(1.0, 1e-9, d, 0.0, []byte{0, 0, 3, 0}, d)
		f.Add(0.0, 0.0, d, 5.0, []byte{}, d)
	}
	f.Add(1e-10, 1e8, int64(10), 0.0, []byte{0, 0, 0, 0, 1, 3, 0}, int64(1))

	f.Fuzz(func(t *testing.T, deposit, refill float64, horizon int64, capacity float64, ops []byte, step int64) {
		clock := clockwork.NewFakeClock()
		cfg := budget.Config{
			DepositPerSuccess: deposit,
			RefillPerSecond:   refill,
			Horizon:           time.Duration(horizon),
			Capacity:          capacity,
			Clock:             clock,
		}
		err := testcheck.Validate(t, cfg, cfg.Validate)
		b, errNew := budget.New(cfg)
		if (err == nil) != (errNew == nil) {
			t.Fatalf("Validate() = %v but New returned %v for %+v", err, errNew, cfg)
		}
		if err != nil {
			testcheck.Blames(t, err, map[string]bool{
				"Config.DepositPerSuccess": deposit != 0,
				"Config.RefillPerSecond":   refill != 0,
				"Config.Horizon":           horizon != 0,
				"Config.Capacity":          capacity != 0,
			})
			return
		}
		limit := b.Capacity()
		if !(limit >= 1 && limit <= budget.MaxCapacity) {
			t.Fatalf("Capacity() = %v for %+v, want it in [1, %v]", limit, cfg, float64(budget.MaxCapacity))
		}
		if got := b.Tokens(); got != limit {
			t.Fatalf("a new budget holds %v tokens, want it full (%v)", got, limit)
		}
		// Far enough to refill any budget, not to overflow the clock.
		advance := time.Duration(uint64(step) % uint64(1000*time.Hour))
		for i, op := range ops[:min(len(ops), 64)] {
			before := b.Tokens()
			switch op % 4 {
			case 0:
				wait, ok := b.Withdraw(criticality.Default)
				if ok != (before >= 1) || ok != (wait == 0) || wait < 0 {
					t.Fatalf("op %d: Withdraw() = %v, %v with %v tokens", i, wait, ok, before)
				}
				if !ok && wait < 1000*time.Hour {
					clock.Advance(wait)
					if _, ok := b.Withdraw(criticality.Default); !ok {
						t.Fatalf("op %d: Withdraw refused %v after the wait %v it gave", i, b.Tokens(), wait)
					}
				}
			case 1:
				b.Deposit()
			case 2:
				b.Refund()
			case 3:
				clock.Advance(advance + time.Duration(op>>2)*time.Millisecond)
			}
			if got := b.Tokens(); math.IsNaN(got) || got < 0 || got > limit || (op%4 != 0 && got < before) {
				t.Fatalf("op %d (%d): Tokens() = %v, was %v, capacity %v", i, op%4, got, before, limit)
			}
			if u := b.Utilization(); !(u >= 0 && u <= 1) {
				t.Fatalf("op %d: Utilization() = %v", i, u)
			}
		}
	})
}

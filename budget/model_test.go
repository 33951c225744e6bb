package budget

import (
	"math"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/resilience-go/pipeline/criticality"
	"pgregory.net/rapid"
)

// model is the reference for a Budget: a real-valued balance in tokens, refilled
// continuously, without the unit rounding of the implementation.
type model struct {
	deposit, rate, capacity float64
	tokens                  float64
}

// budgetMachine drives a Budget and its model with random deposits, withdrawals
// and clock advances.
type budgetMachine struct {
	b     *Budget
	clock *clockwork.FakeClock
	m     model
	ops   int
}

func newBudgetMachine(t *rapid.T) *budgetMachine {
	cfg := Config{
		DepositPerSuccess: rapid.Float64Range(0.001, 1).Draw(t, "deposit"),
		RefillPerSecond:   rapid.Float64Range(0.01, 20).Draw(t, "rate"),
		Capacity:          float64(rapid.IntRange(1, 40).Draw(t, "capacity")),
	}
	clock := clockwork.NewFakeClock()
	cfg.Clock = clock
	b, err := New(cfg)
	if err != nil {
		t.Fatalf("New(%+v): %v", cfg, err)
	}
	return &budgetMachine{
		b: b, clock: clock,
		m: model{deposit: cfg.DepositPerSuccess, rate: cfg.RefillPerSecond, capacity: cfg.Capacity, tokens: cfg.Capacity},
	}
}

// tolerance is how far, in tokens, the implementation may drift from the model:
// the rounding of the deposit to a unit, and of each refill's consumed time to a
// nanosecond.
func (s *budgetMachine) tolerance() float64 {
	return float64(s.ops+1) * (s.m.rate + 2) / unit
}

func (s *budgetMachine) Deposit(t *rapid.T) {
	s.ops++
	s.b.Deposit()
	s.m.tokens = min(s.m.tokens+s.m.deposit, s.m.capacity)
}

func (s *budgetMachine) Refund(t *rapid.T) {
	s.ops++
	s.b.Refund()
	s.m.tokens = min(s.m.tokens+1, s.m.capacity)
}

func (s *budgetMachine) Advance(t *rapid.T) {
	s.ops++
	d := time.Duration(rapid.OneOf(
		rapid.Int64Range(0, 1000),
		rapid.Int64Range(0, int64(time.Second)),
		rapid.Int64Range(0, int64(20*time.Second)),
	).Draw(t, "advance"))
	s.clock.Advance(d)
	s.m.tokens = min(s.m.tokens+d.Seconds()*s.m.rate, s.m.capacity)
}

func (s *budgetMachine) Withdraw(t *rapid.T) {
	s.ops++
	before := s.b.Tokens()
	wait, ok := s.b.Withdraw(criticality.Default)
	if ok != (before >= 1) {
		t.Fatalf("Withdraw ok=%v with %v tokens: refusal must happen exactly below one token", ok, before)
	}
	if math.Abs(s.m.tokens-1) > s.tolerance() && ok != (s.m.tokens >= 1) {
		t.Fatalf("Withdraw ok=%v, but the model holds %v tokens", ok, s.m.tokens)
	}
	if ok {
		if wait != 0 {
			t.Fatalf("granted withdrawal with wait %v", wait)
		}
		s.m.tokens--
		return
	}
	if wait <= 0 {
		t.Fatalf("refusal with wait %v: the hint must be positive", wait)
	}
	s.b.mu.Lock()
	at := s.b.level(s.b.now() + wait)
	early := s.b.level(s.b.now() + wait - 1)
	s.b.mu.Unlock()
	if at < unit {
		t.Fatalf("after the promised wait %v the budget holds only %v units", wait, at)
	}
	if early >= unit {
		t.Fatalf("the promised wait %v is not the shortest: a nanosecond earlier holds %v units", wait, early)
	}
	want := (1 - s.m.tokens) / s.m.rate
	if math.Abs(wait.Seconds()-want) > s.tolerance()/s.m.rate+1e-9 {
		t.Fatalf("wait %v, model says %vs", wait, want)
	}
}

func (s *budgetMachine) Check(t *rapid.T) {
	got := s.b.Tokens()
	if got < 0 || got > s.b.Capacity() {
		t.Fatalf("balance %v outside [0, %v]", got, s.b.Capacity())
	}
	if math.Abs(got-s.m.tokens) > s.tolerance() {
		t.Fatalf("balance %v, model %v (tolerance %v)", got, s.m.tokens, s.tolerance())
	}
	if u := s.b.Utilization(); u < 0 || u > 1 {
		t.Fatalf("utilization %v outside [0, 1]", u)
	}
}

func TestBudgetAgainstModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := newBudgetMachine(t)
		t.Repeat(map[string]func(*rapid.T){
			"deposit":  s.Deposit,
			"withdraw": s.Withdraw,
			"advance":  s.Advance,
			"refund":   s.Refund,
			"":         s.Check,
		})
	})
}

func TestFrequentRefillsLoseNothing(t *testing.T) {
	clock := clockwork.NewFakeClock()
	b, err := New(Config{RefillPerSecond: 0.3, Capacity: 1, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	drain(b)
	// Each 5 ns step earns 1.5 units; refill credits 1 and carries the rest.
	for range 1000 {
		clock.Advance(5)
		if _, ok := b.Withdraw(criticality.Default); ok {
			t.Fatal("granted a withdrawal from an empty bucket")
		}
	}
	if got := b.Tokens() * unit; math.Abs(got-1500) > 1 {
		t.Fatalf("after 5 µs at 0.3 token/s the balance is %v units, want 1500", got)
	}
}

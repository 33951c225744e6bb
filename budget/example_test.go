package budget_test

import (
	"fmt"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/resilience-go/pipeline/budget"
	"github.com/resilience-go/pipeline/criticality"
)

// A budget pays for retries with tokens: a full default budget holds 30, successes
// put back a tenth of a token each, and time refills three tokens a second.
func Example() {
	clock := clockwork.NewFakeClock()
	b, err := budget.New(budget.Config{Clock: clock})
	if err != nil {
		panic(err)
	}
	fmt.Printf("capacity %v, holding %v\n", b.Capacity(), b.Tokens())

	retries := 0
	for {
		if _, ok := b.Withdraw(criticality.Default); !ok {
			break
		}
		retries++
	}
	wait, _ := b.Withdraw(criticality.Default)
	fmt.Printf("paid for %d retries, then refused: retry after %v\n", retries, wait.Round(time.Millisecond))
	fmt.Printf("utilization %.0f%%\n", 100*b.Utilization())

	for range 10 {
		b.Deposit() // ten successful attempts
	}
	_, ok := b.Withdraw(criticality.Default)
	fmt.Println("ten successes pay for one retry:", ok)

	clock.Advance(time.Second)
	fmt.Printf("one second later: %.1f tokens\n", b.Tokens())
	// Output:
	// capacity 30, holding 30
	// paid for 30 retries, then refused: retry after 333ms
	// utilization 100%
	// ten successes pay for one retry: true
	// one second later: 3.0 tokens
}

// A nil budget means unlimited: every withdrawal succeeds.
func Example_unlimited() {
	var b *budget.Budget
	_, ok := b.Withdraw(criticality.Default)
	fmt.Println(ok, b.Utilization())
	// Output: true 0
}

// A budget sized for a small dependency: one token a second, a minute of refill.
func ExampleConfig() {
	b, err := budget.New(budget.Config{RefillPerSecond: 1, Horizon: time.Minute})
	if err != nil {
		panic(err)
	}
	fmt.Println(b.Capacity())

	_, err = budget.New(budget.Config{DepositPerSuccess: 2})
	fmt.Println(err)
	// Output:
	// 60
	// budget: Config.DepositPerSuccess must be a fraction in 0..1, got 2
}

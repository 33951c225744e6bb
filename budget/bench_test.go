package budget

import (
	"testing"

	"github.com/resilience-go/pipeline/criticality"
)

func BenchmarkDeposit(b *testing.B) {
	bud, err := New(Config{})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		bud.Deposit()
	}
}

func BenchmarkWithdraw(b *testing.B) {
	bud, err := New(Config{})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := bud.Withdraw(criticality.Default); !ok {
			// Keep both paths in the mix without stopping the timer.
			bud.Deposit()
		}
	}
}

// BenchmarkDepositWithdrawParallel is the shared-budget case: every goroutine
// deposits nine times for each withdrawal, like a mostly healthy dependency.
func BenchmarkDepositWithdrawParallel(b *testing.B) {
	bud, err := New(Config{})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			if i%10 == 0 {
				bud.Withdraw(criticality.Default)
			} else {
				bud.Deposit()
			}
			i++
		}
	})
}

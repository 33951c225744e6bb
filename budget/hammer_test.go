package budget

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/resilience-go/pipeline/criticality"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHammer has many goroutines deposit and withdraw on one budget while the
// clock moves, and checks that the budget never grants more retries than its
// starting balance, the deposits and the refill could pay for.
func TestHammer(t *testing.T) {
	const (
		workers = 32
		rounds  = 2000
		step    = time.Millisecond
		steps   = 500
	)
	clock := clockwork.NewFakeClock()
	b, err := New(Config{Clock: clock})
	require.NoError(t, err)

	var granted, deposits, refused atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range rounds {
				if (i+w)%3 == 0 {
					b.Deposit()
					deposits.Add(1)
					continue
				}
				if wait, ok := b.Withdraw(criticality.Default); ok {
					granted.Add(1)
				} else {
					refused.Add(1)
					if wait <= 0 {
						t.Errorf("refusal with wait %v", wait)
					}
				}
				if tok := b.Tokens(); tok < 0 || tok > b.Capacity() {
					t.Errorf("balance %v outside [0, %v]", tok, b.Capacity())
				}
			}
		})
	}
	wg.Go(func() {
		for range steps {
			clock.Advance(step)
		}
	})
	wg.Wait()

	elapsed := step * steps
	payable := b.Capacity() + defaultDepositPerSuccess*float64(deposits.Load()) + defaultRefillPerSecond*elapsed.Seconds()
	assert.LessOrEqual(t, float64(granted.Load()), payable, "granted %d retries, the bucket could pay for %v", granted.Load(), payable)
	assert.Positive(t, refused.Load(), "the hammer must empty the bucket to test anything")
	// Conservation: the grants plus what is left never exceed what went in.
	assert.LessOrEqual(t, float64(granted.Load())+b.Tokens(), payable+1e-6)
}

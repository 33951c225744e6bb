package retry

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/budget"
)

// stormResult counts what a fleet of callers did to a dependency.
type stormResult struct {
	calls     int64 // logical calls, each of which made a first attempt
	attempts  int64 // attempts that reached the dependency
	successes int64 // attempts that succeeded
	elapsed   time.Duration
}

// storm runs 100 callers for 10 s of virtual time against a dependency that
// succeeds every succeedEvery-th attempt (never, for 0). Each caller makes a call,
// then pauses 100 ms, and starts over.
func storm(t *testing.T, b *budget.Budget, succeedEvery int64) stormResult {
	const (
		callers = 100
		period  = 100 * time.Millisecond
		length  = 10 * time.Second
	)
	var res stormResult
	p := pipeline.New[int](mustNew[int](t, Config{Budget: b, Rand: newLockedSource(1)}))
	dependency := func(context.Context) (int, error) {
		n := atomic.AddInt64(&res.attempts, 1)
		if succeedEvery > 0 && n%succeedEvery == 0 {
			atomic.AddInt64(&res.successes, 1)
			return 1, nil
		}
		return 0, errBoom
	}
	start := time.Now()
	var wg sync.WaitGroup
	for range callers {
		wg.Go(func() {
			for time.Since(start) < length {
				atomic.AddInt64(&res.calls, 1)
				_, _ = p.Execute(t.Context(), dependency)
				time.Sleep(period)
			}
		})
	}
	wg.Wait()
	res.elapsed = time.Since(start)
	return res
}

// The default budget's deposit per success and refill per second.
const depositPerSuccess, refillPerSecond = 0.1, 3.0

// bound is what the budget allows: every first attempt, plus the deposits of the
// successes, the refill over the run and the full bucket it started with.
func (r stormResult) bound(b *budget.Budget) float64 {
	return float64(r.calls) + depositPerSuccess*float64(r.successes) +
		refillPerSecond*r.elapsed.Seconds() + b.Capacity()
}

func TestRetryStorm(t *testing.T) {
	t.Run("without a budget every caller triples its load", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			r := storm(t, nil, 0)
			t.Logf("%d calls, %d attempts: %.2f attempts per call", r.calls, r.attempts, float64(r.attempts)/float64(r.calls))
			require.Positive(t, r.calls)
			assert.Equal(t, 3*r.calls, r.attempts)
		})
	})
	t.Run("with a budget the fleet adds little", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			b, err := budget.New(budget.Config{})
			require.NoError(t, err)
			r := storm(t, b, 0)
			t.Logf("%d calls, %d attempts over %v: %.3f attempts per call, bound %.0f",
				r.calls, r.attempts, r.elapsed, float64(r.attempts)/float64(r.calls), r.bound(b))
			assert.LessOrEqual(t, float64(r.attempts), r.bound(b))
			assert.GreaterOrEqual(t, r.attempts, r.calls+30, "the budget still pays for the retries it holds")
		})
	})
	t.Run("with a budget and some successes", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			b, err := budget.New(budget.Config{})
			require.NoError(t, err)
			r := storm(t, b, 2)
			t.Logf("%d calls, %d attempts, %d successes: %.3f attempts per call, bound %.0f",
				r.calls, r.attempts, r.successes, float64(r.attempts)/float64(r.calls), r.bound(b))
			require.Positive(t, r.successes)
			assert.LessOrEqual(t, float64(r.attempts), r.bound(b))
			retries := float64(r.attempts - r.calls)
			assert.Greater(t, retries, b.Capacity()+refillPerSecond*r.elapsed.Seconds(),
				"deposits from successes pay for more retries than the bucket and the refill alone")
		})
	})
}

package retry

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/budget"
	"github.com/resilience-go/pipeline/criticality"
	"github.com/resilience-go/pipeline/outcome"
)

// newBudget returns a budget on its own fake clock, which the test never moves
// unless it says so.
func newBudget(t *testing.T, cfg budget.Config) *budget.Budget {
	t.Helper()
	if cfg.Clock == nil {
		cfg.Clock = clockwork.NewFakeClock()
	}
	b, err := budget.New(cfg)
	require.NoError(t, err)
	return b
}

func TestBudgetRefusalStopsTheCallWithItsHint(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var ev events
		b := newBudget(t, budget.Config{Capacity: 2})
		p := pipeline.New[int](mustNew[int](t, Config{MaxAttempts: 10, Budget: b, Backoff: Exponential{Jitter: NoJitter}})).
			With(pipeline.Options[int]{OnEvent: ev.hook})
		w := newWork(fail(errBoom))

		_, err := p.Execute(t.Context(), w.fn)

		assert.Equal(t, ms(0, 100, 300), w.attempts(), "two tokens pay for two retries")
		e := stopError(t, err)
		assert.Equal(t, pipeline.BudgetExhausted, e.Reason)
		assert.Equal(t, time.Second/3+1, e.RetryAfter, "time until one token at 3 tokens/s")
		assert.Equal(t, 3, e.Attempts)
		assert.Same(t, errBoom, e.Err)
		assert.ErrorIs(t, err, pipeline.BudgetExhausted)
		assert.Equal(t, []*pipeline.StopError{e}, ev.stops(), "the refusal is reported")
		assert.Len(t, ev.scheduled(), 2)
		assert.Zero(t, b.Tokens())
	})
}

func TestSuccessfulAttemptsDeposit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBudget(t, budget.Config{Capacity: 2})
		p := pipeline.New[int](mustNew[int](t, Config{Budget: b}))
		for range 2 {
			_, ok := b.Withdraw(criticality.Default)
			require.True(t, ok)
		}
		for range 10 {
			_, err := p.Execute(t.Context(), newWork(succeed(1)).fn)
			require.NoError(t, err)
		}
		assert.InDelta(t, 1, b.Tokens(), 1e-9, "ten successes deposit one token")

		// A retried call that succeeds deposits once, for its successful attempt.
		_, err := p.Execute(t.Context(), newWork(fail(errBoom), succeed(1)).fn)
		require.NoError(t, err)
		assert.InDelta(t, 0.1, b.Tokens(), 1e-9)
	})
}

func TestWhatIsNeverCharged(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		result  func(context.Context) (int, error)
		timeout time.Duration
	}{
		{"the first attempt", Config{MaxAttempts: 1}, fail(errBoom), 0},
		{"a permanent failure", Config{}, fail(outcome.MarkPermanent(errBoom)), 0},
		{"a retry the deadline cuts", Config{}, fail(outcome.MarkThrottled(errBoom, 20*time.Second)), 10 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b := newBudget(t, budget.Config{})
				tt.cfg.Budget = b
				p := pipeline.New[int](mustNew[int](t, tt.cfg))
				ctx := t.Context()
				if tt.timeout > 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, tt.timeout)
					defer cancel()
				}
				w := newWork(tt.result)
				_, err := p.Execute(ctx, w.fn)
				assert.Len(t, w.attempts(), 1)
				require.Error(t, err)
				assert.Equal(t, 30.0, b.Tokens())
			})
		})
	}
}

// TestATokenForARetryThatNeverRunsIsRefunded: the caller cancels during the
// backoff that a token paid for; the retry never runs, so the token comes back.
func TestATokenForARetryThatNeverRunsIsRefunded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBudget(t, budget.Config{Capacity: 2})
		p := pipeline.New[int](mustNew[int](t, Config{Budget: b, Backoff: Constant{Interval: time.Second, Jitter: NoJitter}}))
		ctx, cancel := context.WithCancel(t.Context())
		go func() {
			time.Sleep(10 * time.Millisecond) // virtual: the caller gives up mid-backoff
			cancel()
		}()
		_, err := p.Execute(ctx, newWork(fail(errBoom)).fn)
		assert.ErrorIs(t, err, context.Canceled)
		assert.Equal(t, 2.0, b.Tokens(), "no retry ran, so none was paid for")
	})
}

// TestATokenIsRefundedWhenTheHookPanics: the Scheduled event comes after the
// withdrawal; a hook that panics there stops the retry from running, so the
// token comes back.
func TestATokenIsRefundedWhenTheHookPanics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBudget(t, budget.Config{Capacity: 2})
		p := pipeline.New[int](mustNew[int](t, Config{Budget: b})).With(pipeline.Options[int]{
			OnEvent: func(_ context.Context, _ pipeline.Source, e pipeline.Event) {
				if _, ok := e.(Scheduled); ok {
					panic("hook down")
				}
			},
		})
		assert.PanicsWithValue(t, "hook down", func() { _, _ = p.Execute(t.Context(), newWork(fail(errBoom)).fn) })
		assert.Equal(t, 2.0, b.Tokens())
	})
}

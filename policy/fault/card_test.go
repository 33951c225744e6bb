package fault_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/internal/retryrule"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/breaker"
	"github.com/resilience-go/pipeline/policy/fault"
	"github.com/resilience-go/pipeline/policy/retry"
	"github.com/resilience-go/pipeline/policy/timeout"
)

// card builds timeout -> retry -> breaker -> fault -> fn, with a per-attempt
// timeout of a second between the retry and the breaker.
func card(t *testing.T, br *breaker.Breaker, cfg fault.Config[string]) *pipeline.Pipeline[string] {
	t.Helper()
	whole, err := timeout.New[string](timeout.Config{Timeout: time.Minute})
	require.NoError(t, err)
	perAttempt, err := timeout.New[string](timeout.Config{Timeout: time.Second})
	require.NoError(t, err)
	rt, err := retry.New[string](retry.Config{
		Backoff: retry.BackoffFunc(func(_ int, v outcome.Verdict, _ rand.Source) time.Duration { return v.RetryAfter() }),
	})
	require.NoError(t, err)
	cfg.Enabled = true
	stages := []pipeline.Policy[string]{whole, rt, perAttempt, breaker.Guard[string](br), stage(t, cfg)}
	assert.Empty(t, pipeline.Check(stages...))
	return pipeline.New(stages...)
}

func newBreaker(t *testing.T) *breaker.Breaker {
	t.Helper()
	br, err := breaker.New(breaker.Config{ConsecutiveFailures: 10})
	require.NoError(t, err)
	return br
}

func work(context.Context) (string, error) { return "real", nil }

// Injected Transient failures are retried until the attempts run out, and
// the breaker counts every one.
func TestTransientFaultsAreRetriedAndCounted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		br := newBreaker(t)
		_, err := card(t, br, fault.Config[string]{Transient: 1}).Execute(t.Context(), work)
		assert.ErrorIs(t, err, pipeline.AttemptsExhausted)
		assert.ErrorIs(t, err, fault.ErrInjected)
		assert.Equal(t, retryrule.DefaultMaxAttempts, br.Snapshot().ConsecutiveFailures)
	})
}

// Injected Throttled failures are retried after their hint, and are not
// breaker evidence.
func TestThrottledFaultsWaitTheirHint(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		br := newBreaker(t)
		start := time.Now()
		_, err := card(t, br, fault.Config[string]{Throttled: 1, RetryAfter: 2 * time.Second}).Execute(t.Context(), work)
		assert.Equal(t, 2*2*time.Second, time.Since(start), "two waits of the hint between three attempts")
		assert.ErrorIs(t, err, pipeline.AttemptsExhausted)
		assert.Zero(t, br.Snapshot().ConsecutiveFailures)
	})
}

// Injected Permanent failures stop the call at once.
func TestPermanentFaultsStopAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		br := newBreaker(t)
		_, err := card(t, br, fault.Config[string]{Permanent: 1}).Execute(t.Context(), work)
		stop, ok := errors.AsType[*pipeline.StopError](err)
		require.True(t, ok)
		assert.Equal(t, pipeline.Permanent, stop.Reason)
		assert.Equal(t, 1, stop.Attempts)
	})
}

// Injected latency longer than the per-attempt timeout is cut by it, as a
// slow dependency would be: each attempt is a Transient failure, retried and
// counted.
func TestInjectedLatencyIsCutByTheAttemptTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		br := newBreaker(t)
		start := time.Now()
		_, err := card(t, br, fault.Config[string]{Latency: 1, Delay: 5 * time.Second}).Execute(t.Context(), work)
		assert.Equal(t, 3*time.Second, time.Since(start))
		assert.ErrorIs(t, err, pipeline.AttemptsExhausted)
		assert.ErrorIs(t, err, outcome.ErrTimeout)
		assert.Equal(t, retryrule.DefaultMaxAttempts, br.Snapshot().ConsecutiveFailures)
	})
}

// With a fault on one call in two, the card's retry hides most of them: the
// failure a caller sees is the rarer event of every attempt failing.
func TestTheCardAbsorbsSomeFaults(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		br := newBreaker(t)
		pl := card(t, br, fault.Config[string]{Transient: 0.5, Rand: rand.NewPCG(7, 7)})
		failed := 0
		for range 400 {
			if _, err := pl.Execute(t.Context(), work); err != nil {
				failed++
				br.Reset()
			}
		}
		assert.InDelta(t, 400*0.125, failed, 5*6.6, "about one call in eight fails all three attempts")
	})
}

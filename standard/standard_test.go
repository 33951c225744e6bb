package standard_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/internal/hedgerule"
	"github.com/resilience-go/pipeline/internal/retryrule"
	"github.com/resilience-go/pipeline/policy/breaker"
	"github.com/resilience-go/pipeline/policy/hedge"
	"github.com/resilience-go/pipeline/policy/retry"
	"github.com/resilience-go/pipeline/standard"
)

var errDown = errors.New("down")

func build(t *testing.T, cfg standard.Config) *standard.Pipeline[string] {
	t.Helper()
	p, err := standard.New[string](cfg)
	require.NoError(t, err)
	return p
}

func TestTheDefaultsServeACall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := build(t, standard.Config{})
		v, err := p.Execute(t.Context(), func(context.Context) (string, error) { return "ok", nil })
		require.NoError(t, err)
		assert.Equal(t, "ok", v)
		assert.Equal(t, breaker.Closed, p.Breaker.State())
	})
}

// An attempt that hangs is cut by the attempt timeout and retried, within the
// whole call's timeout, and the retry is paid from the shared budget.
func TestAHungAttemptIsCutAndRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := build(t, standard.Config{Timeout: 3 * time.Second, AttemptTimeout: time.Second,
			Retry: retry.Config{Backoff: retry.Constant{Interval: 50 * time.Millisecond, Jitter: retry.NoJitter}}})
		before := p.Budget.Tokens()
		var attempts atomic.Int32
		start := time.Now()
		v, err := p.Execute(t.Context(), func(ctx context.Context) (string, error) {
			if attempts.Add(1) == 1 {
				<-ctx.Done()
				return "", ctx.Err()
			}
			return "ok", nil
		})
		require.NoError(t, err)
		assert.Equal(t, "ok", v)
		assert.Equal(t, int32(2), attempts.Load())
		assert.Equal(t, time.Second+50*time.Millisecond, time.Since(start))
		assert.Less(t, p.Budget.Tokens(), before, "the retry was paid from the shared budget")
	})
}

func TestTheWholeCallHasItsDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := build(t, standard.Config{Timeout: 2 * time.Second, AttemptTimeout: time.Second})
		start := time.Now()
		_, err := p.Execute(t.Context(), func(ctx context.Context) (string, error) {
			<-ctx.Done()
			return "", ctx.Err()
		})
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.LessOrEqual(t, time.Since(start), 2*time.Second)
	})
}

// The breaker is inside the retry: it samples every attempt, so a trip during
// one call refuses the next attempt.
func TestTheBreakerSamplesEveryAttempt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := build(t, standard.Config{Breaker: breaker.Config{ConsecutiveFailures: 2}, Retry: retry.Config{MaxAttempts: 5}})
		var attempts atomic.Int32
		_, err := p.Execute(t.Context(), func(context.Context) (string, error) {
			attempts.Add(1)
			return "", errDown
		})
		assert.ErrorIs(t, err, pipeline.DependencyUnavailable)
		assert.Equal(t, int32(2), attempts.Load(), "the third attempt was refused")
		assert.Equal(t, breaker.Open, p.Breaker.State())
	})
}

func TestARetryOverrideReachesTheRetry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := build(t, standard.Config{Retry: retry.Config{MaxAttempts: 4}, Breaker: breaker.Config{ConsecutiveFailures: 10}})
		var attempts atomic.Int32
		_, err := p.Execute(t.Context(), func(context.Context) (string, error) {
			attempts.Add(1)
			return "", errDown
		})
		assert.ErrorIs(t, err, pipeline.AttemptsExhausted)
		assert.Equal(t, int32(4), attempts.Load())
	})
}

// A slow repeatable call is hedged once the shared estimator knows what is
// normal, and the hedge is paid from the same budget as retries.
func TestASlowRepeatableCallIsHedged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := build(t, standard.Config{})
		for range hedgerule.DefaultMinSamples {
			p.Estimator.Record(p.Estimator.Now(), time.Millisecond)
		}
		before := p.Budget.Tokens()
		var copies atomic.Int32
		start := time.Now()
		v, err := p.Execute(hedge.Repeatable(t.Context()), func(ctx context.Context) (string, error) {
			if copies.Add(1) == 1 {
				<-ctx.Done() // the first copy hangs until the hedge wins
				return "", ctx.Err()
			}
			return "hedge", nil
		})
		require.NoError(t, err)
		assert.Equal(t, "hedge", v)
		assert.Equal(t, hedgerule.DefaultMinDelay, time.Since(start))
		assert.Less(t, p.Budget.Tokens(), before)
	})
}

func TestNoHedgeLeavesTheStageOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := build(t, standard.Config{NoHedge: true, AttemptTimeout: 50 * time.Millisecond})
		for range hedgerule.DefaultMinSamples {
			p.Estimator.Record(p.Estimator.Now(), time.Millisecond)
		}
		var copies atomic.Int32
		_, _ = p.Execute(hedge.Repeatable(t.Context()), func(ctx context.Context) (string, error) {
			copies.Add(1)
			<-ctx.Done()
			return "", ctx.Err()
		})
		assert.Equal(t, int32(retryrule.DefaultMaxAttempts), copies.Load(), "one copy per attempt, none hedged")
	})
}

func TestImpossibleSettingsAreRefusedByName(t *testing.T) {
	for _, tt := range []struct {
		cfg  standard.Config
		want string
	}{
		{standard.Config{Timeout: -1}, "standard: Config.Timeout must not be negative"},
		{standard.Config{AttemptTimeout: -1}, "standard: Config.AttemptTimeout must not be negative"},
		{standard.Config{Timeout: time.Second, AttemptTimeout: time.Second}, "standard: Config.AttemptTimeout must be shorter than the whole call's Timeout (1s), got 1s"},
		{standard.Config{NoRecovery: true, Breaker: breaker.Config{Recovery: &breaker.Recovery{}}}, "standard: Config.NoRecovery is set, and so is Breaker.Recovery"},
		{standard.Config{Hedge: hedge.Config{Breaker: new(breaker.Breaker)}}, "standard: Config.Hedge.Breaker, Hedge.Budget and Hedge.Estimator must be nil"},
		{standard.Config{Retry: retry.Config{MaxAttempts: -1}}, "retry: Config.MaxAttempts"},
		{standard.Config{Breaker: breaker.Config{ConsecutiveFailures: -1}}, "breaker: Config.ConsecutiveFailures"},
	} {
		_, err := standard.New[string](tt.cfg)
		require.Error(t, err, "%+v", tt.cfg)
		assert.Contains(t, err.Error(), tt.want)
	}
}

// TestAnUntimedPipelineSharesTheBreakerNotTheLatency runs quick calls
// through NewUntimed's pipeline and 50 ms ones through the pipeline beside
// it, on virtual time: they share the breaker and the budget, the breaker's
// normal latency is the timed calls' alone, each pipeline's estimator holds
// its own calls, and failures through either open the one breaker.
func TestAnUntimedPipelineSharesTheBreakerNotTheLatency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		timed := build(t, standard.Config{Breaker: breaker.Config{ConsecutiveFailures: 3}, Retry: retry.Config{MaxAttempts: 1}})
		untimed, err := standard.NewUntimed(standard.Config{Retry: retry.Config{MaxAttempts: 1}}, timed)
		require.NoError(t, err)
		assert.Same(t, timed.Breaker, untimed.Breaker)
		assert.Same(t, timed.Budget, untimed.Budget)
		assert.NotSame(t, timed.Estimator, untimed.Estimator)
		quick := func(context.Context) (string, error) { return "ok", nil }
		slow := func(context.Context) (string, error) {
			time.Sleep(50 * time.Millisecond)
			return "ok", nil
		}
		for range 40 {
			_, err := untimed.Execute(t.Context(), quick)
			require.NoError(t, err)
		}
		for range 20 {
			_, err := timed.Execute(t.Context(), slow)
			require.NoError(t, err)
		}
		normal, ok := timed.Breaker.NormalLatency()
		require.True(t, ok)
		assert.InEpsilon(t, float64(50*time.Millisecond), float64(normal), 0.01)
		_, n := untimed.Estimator.Quantile(untimed.Estimator.Now(), 0.5)
		assert.Equal(t, 40, n)
		_, n = timed.Estimator.Quantile(timed.Estimator.Now(), 0.5)
		assert.Equal(t, 20, n)
		for range 3 {
			_, _ = untimed.Execute(t.Context(), func(context.Context) (string, error) { return "", errDown })
		}
		assert.Equal(t, breaker.Open, timed.Breaker.State(), "its failures count")

		_, err = standard.NewUntimed[string](standard.Config{}, nil)
		assert.Error(t, err)
	})
}

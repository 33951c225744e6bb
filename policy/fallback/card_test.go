package fallback_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/budget"
	"github.com/resilience-go/pipeline/internal/retryrule"
	"github.com/resilience-go/pipeline/policy/breaker"
	"github.com/resilience-go/pipeline/policy/fallback"
	"github.com/resilience-go/pipeline/policy/retry"
	"github.com/resilience-go/pipeline/policy/timeout"
)

// card builds fallback -> timeout -> retry -> breaker, with a Func that
// reports the error it replaced.
func card(t *testing.T, br *breaker.Breaker, replaced *error) *pipeline.Pipeline[string] {
	t.Helper()
	fb, err := fallback.New(fallback.Config[string]{
		Func: func(_ context.Context, r pipeline.Result[string]) (string, error) {
			*replaced = r.Err
			return "from cache", nil
		},
	})
	require.NoError(t, err)
	to, err := timeout.New[string](timeout.Config{Timeout: 10 * time.Second})
	require.NoError(t, err)
	bud, err := budget.New(budget.Config{})
	require.NoError(t, err)
	rt, err := retry.New[string](retry.Config{Budget: bud})
	require.NoError(t, err)
	stages := []pipeline.Policy[string]{fb, to, rt, breaker.Guard[string](br)}
	assert.Empty(t, pipeline.Check(stages...), "the card with a fallback outermost raises no problem")
	return pipeline.New(stages...)
}

// Outermost over a breaker that refuses, the fallback answers, and the
// refusal it replaced is the breaker's.
func TestFallbackOverARefusingBreaker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		br, err := breaker.New(breaker.Config{})
		require.NoError(t, err)
		br.Isolate()
		var replaced error
		ran := false
		v, err := card(t, br, &replaced).Execute(t.Context(), func(context.Context) (string, error) {
			ran = true
			return "fresh", nil
		})
		require.NoError(t, err)
		assert.Equal(t, "from cache", v)
		assert.False(t, ran, "the breaker refused: the work never ran")
		assert.ErrorIs(t, replaced, pipeline.DependencyUnavailable)
		stop, ok := errors.AsType[*pipeline.StopError](replaced)
		require.True(t, ok)
		assert.Equal(t, "breaker", stop.Stage)
	})
}

// Outermost over retries that run out, the fallback answers once, after the
// last attempt.
func TestFallbackAfterRetriesRunOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		br, err := breaker.New(breaker.Config{})
		require.NoError(t, err)
		var replaced error
		attempts := 0
		v, err := card(t, br, &replaced).Execute(t.Context(), func(context.Context) (string, error) {
			attempts++
			return "", errDown
		})
		require.NoError(t, err)
		assert.Equal(t, "from cache", v)
		assert.Equal(t, retryrule.DefaultMaxAttempts, attempts)
		assert.ErrorIs(t, replaced, pipeline.AttemptsExhausted)
		assert.ErrorIs(t, replaced, errDown)
	})
}

// The whole call's deadline, ours, is replaced too; the caller's is not.
func TestFallbackAfterOurDeadlineNotTheCallers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		br, err := breaker.New(breaker.Config{})
		require.NoError(t, err)
		var replaced error
		hang := func(ctx context.Context) (string, error) { <-ctx.Done(); return "", ctx.Err() }

		v, err := card(t, br, &replaced).Execute(t.Context(), hang)
		require.NoError(t, err)
		assert.Equal(t, "from cache", v)
		assert.ErrorIs(t, replaced, context.DeadlineExceeded)

		replaced = nil
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		_, err = card(t, br, &replaced).Execute(ctx, hang)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Nil(t, replaced, "the caller's own deadline is not replaced")
	})
}

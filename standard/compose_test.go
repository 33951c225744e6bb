package standard_test

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
	"github.com/resilience-go/pipeline/policy/breaker"
	"github.com/resilience-go/pipeline/policy/bulkhead"
	"github.com/resilience-go/pipeline/policy/ceiling"
	"github.com/resilience-go/pipeline/policy/fallback"
	"github.com/resilience-go/pipeline/policy/fault"
	"github.com/resilience-go/pipeline/policy/hedge"
	"github.com/resilience-go/pipeline/policy/ratelimit"
	"github.com/resilience-go/pipeline/policy/retry"
	"github.com/resilience-go/pipeline/policy/timeout"
	"github.com/resilience-go/pipeline/standard"
)

// counted is a custom stage that describes itself and counts its calls.
type counted struct{ calls *int }

func (c counted) Stage() pipeline.StageInfo { return pipeline.StageInfo{Kind: "counted"} }
func (c counted) Execute(ctx context.Context, next pipeline.Next[string]) pipeline.Result[string] {
	*c.calls++
	return next.Run(ctx)
}

// Compose builds the card from configurations, T written once, and the
// stages work as the ones built by hand: the breaker given is the one that
// guards, the budget the one that pays.
func TestComposeBuildsTheCardFromConfigurations(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		funds, err := budget.New(budget.Config{RefillPerSecond: 0.001, Capacity: 30}) // no refill to hide what the retry paid
		require.NoError(t, err)
		brk, err := breaker.New(breaker.Config{Name: "db", ConsecutiveFailures: 2})
		require.NoError(t, err)
		calls := 0
		p, err := standard.Compose[string](
			timeout.Config{Name: "db", Timeout: time.Minute},
			retry.Config{Name: "db", Budget: funds, MaxAttempts: 5},
			brk,
			hedge.Config{Name: "db", Breaker: brk, Budget: funds},
			counted{&calls},
			timeout.Config{Name: "db", Timeout: time.Second},
		)
		require.NoError(t, err)
		assert.Equal(t, []pipeline.StageInfo{
			{Kind: "timeout", Name: "db", Timeout: time.Minute},
			{Kind: "retry", Name: "db"},
			{Kind: "breaker", Name: "db"},
			{Kind: "hedge", Name: "db"},
			{Kind: "counted"},
			{Kind: "timeout", Name: "db", Timeout: time.Second},
		}, p.Stages())

		before := funds.Tokens()
		_, err = p.Execute(t.Context(), func(context.Context) (string, error) { return "", errDown })
		assert.ErrorIs(t, err, pipeline.DependencyUnavailable, "the breaker given tripped after two attempts")
		assert.Equal(t, breaker.Open, brk.State())
		assert.Equal(t, 2, calls)
		assert.Less(t, funds.Tokens(), before, "the budget given paid the retry")
	})
}

func TestComposeRefusesWhatItCannotBuildByPosition(t *testing.T) {
	var nilRetry *retry.Policy[string]
	var nilBreaker *breaker.Breaker
	_, err := standard.Compose[string](
		timeout.Config{}, // no timeout: refused by timeout.New
		nilRetry,
		nilBreaker,
		retry.Config{MaxAttempts: -1},
		nil,
		breaker.Guard[int](mustBreaker(t)), // a stage of another result type
	)
	require.Error(t, err)
	for _, want := range []string{
		"standard: Compose: stage 1: timeout: Config.Timeout must be positive",
		"standard: Compose: stage 2: a nil *retry.Policy[string]",
		"standard: Compose: stage 3: a nil *breaker.Breaker",
		"standard: Compose: stage 4: retry: Config.MaxAttempts",
		"standard: Compose: stage 5: nil",
		"standard: Compose: stage 6: a *breaker.Policy[int] is neither a pipeline.Policy[string] nor a stage Compose builds",
	} {
		assert.ErrorContains(t, err, want)
	}
}

// A composition pipeline.New would panic on is an error of Compose.
func TestComposeReturnsTheChecksErrors(t *testing.T) {
	_, err := standard.Compose[string](timeout.Config{Timeout: time.Second}, retry.Config{}, timeout.Config{Timeout: time.Minute})
	require.Error(t, err)
	assert.ErrorContains(t, err, "standard: Compose: error: stages 1 and 3: the inner timeout (1m0s) is not shorter than the outer one (1s)")
	var problem pipeline.Problem
	assert.True(t, errors.As(err, &problem))
	assert.Equal(t, pipeline.Error, problem.Severity)
}

func mustBreaker(t *testing.T) *breaker.Breaker {
	t.Helper()
	b, err := breaker.New(breaker.Config{})
	require.NoError(t, err)
	return b
}

// The stages of issue 15 compose by configuration too: a fallback outermost
// answers the refusal of an isolated breaker, through a retry and a ceiling.
func TestComposeBuildsTheOtherStages(t *testing.T) {
	brk := mustBreaker(t)
	brk.Isolate()
	limit, err := ratelimit.New(ratelimit.Config{Rate: 100})
	require.NoError(t, err)
	slots, err := bulkhead.New(bulkhead.Config{MaxConcurrent: 4})
	require.NoError(t, err)
	p, err := standard.Compose[string](
		fallback.Config[string]{Func: func(context.Context, pipeline.Result[string]) (string, error) { return "cached", nil }},
		retry.Config{RefusalPause: -1},
		limit,
		slots,
		brk,
		ceiling.Config{},
		fault.Config[string]{},
	)
	require.NoError(t, err)
	kinds := []string{}
	for _, s := range p.Stages() {
		kinds = append(kinds, s.Kind)
	}
	assert.Equal(t, []string{"fallback", "retry", "ratelimit", "bulkhead", "breaker", "ceiling", "fault"}, kinds)
	v, err := p.Execute(context.Background(), func(context.Context) (string, error) { return "fresh", nil })
	require.NoError(t, err)
	assert.Equal(t, "cached", v)
}

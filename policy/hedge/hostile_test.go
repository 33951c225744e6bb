package hedge_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/budget"
	"github.com/resilience-go/pipeline/criticality"
	"github.com/resilience-go/pipeline/internal/hedgerule"
	"github.com/resilience-go/pipeline/policy/hedge"
)

// raised runs f and returns the *pipeline.PanicError it panicked with, or nil.
func raised(f func()) (pe *pipeline.PanicError) {
	defer func() { pe, _ = recover().(*pipeline.PanicError) }()
	f()
	return nil
}

// panicOn is an event hook that panics on events named name.
func panicOn(name string) pipeline.Options[string] {
	return pipeline.Options[string]{OnEvent: func(_ context.Context, _ pipeline.Source, e pipeline.Event) {
		if e.Name() == name {
			panic("hook down on " + name)
		}
	}}
}

// TestAPanickingHookOnASentHedgeReachesTheCaller: the hedge's event is emitted
// on the timer's goroutine; its hook's panic must reach the caller of Execute,
// and the call must not wait for a copy that never ran.
func TestAPanickingHookOnASentHedgeReachesTheCaller(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := stage(t, hedge.Config{})
		w := slowFirst()
		start := time.Now()
		pe := raised(func() { _, _, _ = execute(t.Context(), p, w, nil, panicOn("hedge.sent")) })
		require.NotNil(t, pe, "the hook's panic must reach the caller")
		assert.Equal(t, "hook down on hedge.sent", pe.Value)
		assert.Equal(t, hedgerule.DefaultMinDelay, time.Since(start), "the first copy was canceled at once")
		assert.Equal(t, []int{0}, w.canceledCopies())
	})
}

// TestAPanickingHookOnASkippedHedgeReachesTheCaller: the same for the event of
// a hedge the budget refused.
func TestAPanickingHookOnASkippedHedgeReachesTheCaller(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, err := budget.New(budget.Config{Capacity: 1, RefillPerSecond: 0.001})
		require.NoError(t, err)
		_, ok := b.Withdraw(criticality.Default)
		require.True(t, ok)
		p := stage(t, hedge.Config{Budget: b})
		pe := raised(func() { _, _, _ = execute(t.Context(), p, slowFirst(), nil, panicOn("hedge.skipped")) })
		require.NotNil(t, pe, "the hook's panic must reach the caller")
		assert.Equal(t, "hook down on hedge.skipped", pe.Value)
	})
}

// TestAPanickingHedgeCancelsTheFirstCopy: the call will panic, so the first
// copy, which only stops on its context, must be canceled rather than waited
// for.
func TestAPanickingHedgeCancelsTheFirstCopy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := stage(t, hedge.Config{})
		w := &work{plans: []copyPlan{
			{after: time.Hour, value: "first"},
			{after: time.Millisecond, panics: "hedge down"},
		}}
		start := time.Now()
		pe := raised(func() { _, _, _ = execute(t.Context(), p, w, nil) })
		require.NotNil(t, pe)
		assert.Equal(t, "hedge down", pe.Value)
		assert.Equal(t, hedgerule.DefaultMinDelay+time.Millisecond, time.Since(start), "not an hour")
	})
}

// TestAPanickingReleaseStillReleasesTheOtherLosers: with three copies and a
// Release hook that panics on the first loser it is given, the other loser is
// released all the same, and the panic reaches the caller; the winner, which the
// call can no longer return, is released too.
func TestAPanickingReleaseStillReleasesTheOtherLosers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := stage(t, hedge.Config{MaxAttempts: 3})
		w := &work{plans: []copyPlan{
			{after: time.Hour, value: "a"},
			{after: time.Hour, value: "b"},
			{after: time.Millisecond, value: "c"},
		}}
		var mu sync.Mutex
		var released []string
		pe := raised(func() {
			_, _, _ = execute(t.Context(), p, w, nil, pipeline.Options[string]{Release: func(v string) {
				mu.Lock()
				released = append(released, v)
				first := len(released) == 1
				mu.Unlock()
				if first {
					panic("release down")
				}
			}})
		})
		require.NotNil(t, pe, "the release hook's panic reaches the caller")
		assert.Equal(t, "release down", pe.Value)
		assert.ElementsMatch(t, []string{"canceled a", "canceled b", "c"}, released, "every value was released")
	})
}

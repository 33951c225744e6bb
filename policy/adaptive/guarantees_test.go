package adaptive_test

import (
	"context"
	"testing"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/criticality"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/adaptive"
)

// A flood of Critical calls fills a limit with a guarantee for Sheddable
// ones, and once a Sheddable call has found no slot, the slot a Critical
// call gives back, with Done or through the stage, goes to Sheddable
// calls: the ticket and the stage name the level they free.
func TestALimitKeepsItsGuarantee(t *testing.T) {
	critical := criticality.With(context.Background(), criticality.Critical)
	sheddable := criticality.With(context.Background(), criticality.Sheddable)
	l := mustNew(t, adaptive.Config{InitialLimit: 4, MinLimit: 4, MaxLimit: 4,
		Guarantees: criticality.Guarantees{Sheddable: 0.5}, Clock: clockwork.NewFakeClock()})
	var tickets []adaptive.Ticket
	for range 4 {
		tk, ok := l.TryAcquire(critical)
		require.True(t, ok, "an unused guarantee is lent")
		tickets = append(tickets, tk)
	}
	_, ok := l.TryAcquire(sheddable)
	require.False(t, ok)

	l.Done(tickets[0], outcome.Verdict{})
	_, ok = l.TryAcquire(critical)
	assert.False(t, ok, "the slot is kept for Sheddable calls")
	shed, ok := l.TryAcquire(sheddable)
	require.True(t, ok)

	l.Done(tickets[1], outcome.Verdict{})
	p := pipeline.New(adaptive.Guard[int](l))
	_, err := p.Execute(critical, func(context.Context) (int, error) { return 1, nil })
	assert.Error(t, err, "Sheddable calls hold one slot of their two")
	_, err = p.Execute(sheddable, func(context.Context) (int, error) { return 1, nil })
	assert.NoError(t, err, "the stage gives the slot back as Sheddable's")
	_, err = p.Execute(sheddable, func(context.Context) (int, error) { return 1, nil })
	assert.NoError(t, err)

	l.Done(shed, outcome.Verdict{})
	assert.Equal(t, 2, l.InFlight(), "every slot went back to the level that took it")
}

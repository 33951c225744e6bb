package breaker_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/criticality"
	"github.com/resilience-go/pipeline/policy/breaker"
)

// rampOf offers calls of the given levels, in turn, through a breaker stage
// at the start of its recovery ramp (p = 1/8), each an instant success, and
// counts the admitted calls by level.
func rampOf(t *testing.T, levels []criticality.Level) (offered, admitted [criticality.Levels + 1]int) {
	r := newRig(t, exact())
	r.run(fail, 0)
	r.clock.Advance(8 * time.Second)
	r.run(ok, 0)
	r.run(ok, 0)
	require.Equal(t, breaker.Recovering, r.state())
	p := pipeline.New[int](breaker.Guard[int](r.b))
	for _, l := range levels {
		offered[l]++
		ctx := criticality.With(context.Background(), l)
		if _, err := p.Execute(ctx, func(context.Context) (int, error) { return 1, nil }); err == nil {
			admitted[l]++
		}
	}
	return offered, admitted
}

// mix is n calls, one in every k Critical and the rest Sheddable.
func mix(n, k int) []criticality.Level {
	ls := make([]criticality.Level, n)
	for i := range ls {
		ls[i] = criticality.Sheddable
		if i%k == 0 {
			ls[i] = criticality.Critical
		}
	}
	return ls
}

func TestTheRampAdmitsCriticalCallsFirst(t *testing.T) {
	// One call in ten Critical, fewer than the ramp's 1/8: every one is
	// admitted, and the ramp's share of the offers is kept, within the one
	// call a Critical one may borrow.
	offered, admitted := rampOf(t, mix(160, 10))
	assert.Equal(t, offered[criticality.Critical], admitted[criticality.Critical], "every critical call")
	total := admitted[criticality.Critical] + admitted[criticality.Sheddable]
	assert.InDelta(t, 160/8, total, 1, "the ramp's share of the offers")
	// One call in four Critical, more than the ramp admits: the ramp's whole
	// share goes to them, none to Sheddable calls.
	offered, admitted = rampOf(t, mix(160, 4))
	assert.InDelta(t, 160/8, admitted[criticality.Critical], 1)
	assert.Zero(t, admitted[criticality.Sheddable])
	assert.Less(t, admitted[criticality.Critical], offered[criticality.Critical])
}

func TestTheRampAdmitsUnmarkedCallsAsBefore(t *testing.T) {
	offered, admitted := rampOf(t, make([]criticality.Level, 160)) // level 0: unmarked
	assert.Equal(t, 160, offered[0])
	assert.Equal(t, 160/8, admitted[0], "one in eight, as deficit accounting at 1/8 admits")
}

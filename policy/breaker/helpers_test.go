package breaker_test

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/breaker"
)

var (
	ok        = outcome.Verdict{}
	fail      = outcome.Verdict{Kind: outcome.Transient}
	throttled = outcome.Verdict{Kind: outcome.Throttled}.WithRetryAfter(time.Second)
	permanent = outcome.Verdict{Kind: outcome.Permanent}
	canceled  = outcome.Verdict{Kind: outcome.Permanent, Canceled: true}
	selfImp   = outcome.Verdict{Kind: outcome.Transient, SelfImposed: true}
)

var epoch = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// rig is a breaker on a fake clock with a recorded event log.
type rig struct {
	t      *testing.T
	clock  *clockwork.FakeClock
	b      *breaker.Breaker
	events []pipeline.Event
	ticket []breaker.Ticket
}

func newRig(t *testing.T, cfg breaker.Config) *rig {
	t.Helper()
	r := &rig{t: t, clock: clockwork.NewFakeClockAt(epoch)}
	cfg.Clock = r.clock
	if cfg.Rand == nil {
		cfg.Rand = rand.NewPCG(1, 2)
	}
	cfg.OnEvent = func(_ context.Context, _ pipeline.Source, e pipeline.Event) { r.events = append(r.events, e) }
	b, err := breaker.New(cfg)
	require.NoError(t, err)
	r.b = b
	return r
}

// admit admits an attempt, requires success, and returns its ticket index.
func (r *rig) admit() int {
	r.t.Helper()
	tk, err := r.b.Admit()
	require.NoError(r.t, err)
	r.ticket = append(r.ticket, tk)
	return len(r.ticket) - 1
}

// refused requires a refusal and returns its retry-after hint.
func (r *rig) refused() time.Duration {
	r.t.Helper()
	_, err := r.b.Admit()
	require.Error(r.t, err)
	se, isStop := err.(*pipeline.StopError)
	require.True(r.t, isStop, "error %T is not a *pipeline.StopError", err)
	assert.Equal(r.t, "breaker", se.Stage)
	assert.Equal(r.t, pipeline.DependencyUnavailable, se.Reason)
	return se.RetryAfter
}

// run admits one attempt, lets it take d and records v.
func (r *rig) run(v outcome.Verdict, d time.Duration) {
	r.t.Helper()
	i := r.admit()
	r.clock.Advance(d)
	r.b.Done(r.ticket[i], v)
}

func (r *rig) state() breaker.State { return r.b.State() }

// transitions returns the "from->to" of every Transition event so far.
func (r *rig) transitions() []string {
	var out []string
	for _, e := range r.events {
		if tr, isTr := e.(breaker.Transition); isTr {
			out = append(out, tr.From.String()+"->"+tr.To.String())
		}
	}
	return out
}

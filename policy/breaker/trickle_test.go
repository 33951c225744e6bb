package breaker_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline/policy/breaker"
)

// trickling is a breaker whose first failure opens it for 8 s, with a ramp
// whose trickle lets through one in 8 offered attempts, and at least one a
// second.
func trickling() breaker.Config {
	cfg := exact()
	cfg.Recovery.TrickleEvery = 0 // the default: 1 s
	return cfg
}

func TestTheTrickleLetsProbesThroughTheBreak(t *testing.T) {
	r := newRig(t, trickling())
	r.run(fail, 0)
	require.Equal(t, breaker.Open, r.state())

	for range 7 {
		assert.Equal(t, 8*time.Second, r.refused(), "refused with the rest of the break")
	}
	p := r.admit()
	assert.True(t, r.ticket[p].Probe(), "the eighth offer goes through, as a probe")
	assert.Equal(t, 1, r.b.Snapshot().Probes)
	for range 16 {
		r.refused() // its one probe slot is held
	}
	r.b.Record(r.ticket[p], fail, fast)
	assert.Equal(t, breaker.Open, r.state(), "a failed probe changes nothing")
	assert.Equal(t, epoch.Add(8*time.Second), r.b.Snapshot().BreakEnds, "the break is no longer")
	assert.Equal(t, 1, r.b.Snapshot().Trips, "and grows no more")
	p = r.admit()
	assert.True(t, r.ticket[p].Probe(), "the share is owed once, not once per offer refused while the slot was held")
	r.b.Record(r.ticket[p], fail, fast)
	for range 7 {
		r.refused()
	}

	r.clock.Advance(time.Second)
	p = r.admit()
	assert.True(t, r.ticket[p].Probe(), "a second later one goes through whatever the count")
	r.b.Record(r.ticket[p], ok, slow)
	assert.Equal(t, breaker.Open, r.state(), "a slow success does not end the break")

	r.clock.Advance(time.Second)
	p = r.admit()
	r.b.Record(r.ticket[p], ok, fast)
	assert.Equal(t, breaker.HalfOpen, r.state(), "a fast one does")
	lastCause(breaker.CauseTrickle)(r)
	assert.Equal(t, 1, r.b.Snapshot().ProbeSuccesses, "and counts as a probe")
	r.run(ok, 0)
	require.Equal(t, breaker.Recovering, r.state(), "one more fast probe starts the ramp")
	assert.Equal(t, time.Second, r.b.Snapshot().RampLength, "half of the 2 s it was open")
}

func TestNothingTricklesThroughAnOperatorsBreakNorWithoutARamp(t *testing.T) {
	off := trickling()
	off.Recovery.TrickleEvery = -1
	cliff := trickling()
	cliff.Recovery = nil
	trip := func(r *rig) { r.run(fail, 0) }
	for _, tc := range []struct {
		name string
		cfg  breaker.Config
		open func(*rig)
	}{
		{"IsolateFor", trickling(), func(r *rig) { r.b.IsolateFor(8 * time.Second) }},
		{"Isolate", trickling(), func(r *rig) { r.b.Isolate() }},
		{"trickle off", off, trip},
		{"no Recovery", cliff, trip},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, tc.cfg)
			tc.open(r)
			for range 4 {
				for range 20 {
					_, err := r.b.Admit()
					require.Error(t, err)
				}
				r.clock.Advance(time.Second)
			}
		})
	}
}

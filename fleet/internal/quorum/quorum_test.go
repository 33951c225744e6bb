package quorum

import (
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/breaker"
)

func TestNeed(t *testing.T) {
	for seen, want := range map[int]int{0: 2, 1: 2, 3: 2, 4: 3, 200: 101} {
		assert.Equal(t, want, Need(seen, 0, DefaultFraction), "seen %d", seen)
	}
	assert.Equal(t, MinQuorum, Need(10, 1, DefaultFraction), "never below MinQuorum")
	assert.Equal(t, 7, Need(3, 7, DefaultFraction), "a count, whatever the fleet's size")
	assert.True(t, Reached(101, Need(200, 0, DefaultFraction)))
	assert.False(t, Reached(100, Need(200, 0, DefaultFraction)))
}

func TestTally(t *testing.T) {
	var tl Tally
	tl.Add(Open, 0, time.Second)
	tl.Add(Open, time.Second, time.Second)    // just in time
	tl.Add(Open, time.Second+1, time.Second)  // stale
	tl.Add(Following, 0, time.Second)         // seen, not open
	tl.Add(Closed, -time.Second, time.Second) // a clock ahead of the reader's
	assert.Equal(t, Tally{Seen: 4, Open: 2}, tl)
}

// A member follows a quorum only from Closed, renews only its own break,
// reports that break as following, and leaves a breaker that tripped on its
// own evidence alone.
func TestMember(t *testing.T) {
	clock := clockwork.NewFakeClock()
	b, err := breaker.New(breaker.Config{Name: "d", Clock: clock})
	require.NoError(t, err)
	var m Member
	assert.Equal(t, Closed, m.Report(b.Snapshot()))

	forced, started := m.Follow(b, Hold(time.Second))
	assert.True(t, forced)
	assert.True(t, started)
	assert.Equal(t, Following, m.Report(b.Snapshot()))
	clock.Advance(time.Second)
	forced, started = m.Follow(b, Hold(time.Second))
	assert.True(t, forced)
	assert.False(t, started, "a renewal")
	assert.Equal(t, clock.Now().Add(2*time.Second), b.Snapshot().BreakEnds)

	// The break runs out; the probe fails: the breaker is open on its own.
	clock.Advance(2 * time.Second)
	tk, err := b.Admit()
	require.NoError(t, err)
	b.Record(tk, outcome.Verdict{Kind: outcome.Transient}, time.Millisecond)
	require.Equal(t, breaker.Open, b.State())
	assert.Equal(t, Open, m.Report(b.Snapshot()))
	forced, _ = m.Follow(b, Hold(time.Second))
	assert.False(t, forced, "its own break is left alone")
	assert.Equal(t, Open, m.Report(b.Snapshot()))

	b.Isolate()
	assert.Equal(t, Open, m.Report(b.Snapshot()), "isolated locally")
	m.Isolated = true
	assert.Equal(t, Following, m.Report(b.Snapshot()), "isolated by the fleet")
}

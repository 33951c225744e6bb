package discrete

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// Next moves the clock to each event it returns and not to a stale one it
// drops, so that a stale event changes nothing, not even how long the run
// lasts; events of one time come in the order they were scheduled.
func TestNextMovesTheClockToLiveEventsOnly(t *testing.T) {
	g := New[string]()
	g.Schedule(2*time.Second, "b")
	g.Schedule(time.Second, "a")
	g.Schedule(2*time.Second, "c")
	g.Schedule(5*time.Second, "stale")
	stale := func(e string) bool { return e == "stale" }
	var got []string
	for {
		e, ok := g.Next(stale)
		if !ok {
			break
		}
		got = append(got, e)
		assert.Equal(t, Epoch.Add(g.Now), g.Clock.Now(), e)
	}
	assert.Equal(t, []string{"a", "b", "c"}, got)
	assert.Equal(t, 2*time.Second, g.Now, "the stale event did not move the clock")
}

// Derive gives every stream and index a seed of its own.
func TestDeriveSeparatesStreams(t *testing.T) {
	seen := map[uint64]bool{}
	for stream := range uint64(8) {
		for i := range uint64(64) {
			seen[Derive(1, stream, i)] = true
		}
	}
	assert.Len(t, seen, 8*64)
}

// Package quorum is the fleet's decision with Redis taken out: what a process
// reports of its breaker, when the reports of the processes seen make a
// quorum, and how a process's breaker follows one. Package fleet applies it
// to what it reads from Redis, where its summary script counts the reports
// by Tally's rule (its TestSummaryAgreesWithTally checks they agree); the
// fleet's simulation (fleet/simulate) applies the same code to reports it
// keeps in memory, on virtual time, so that what it measures is what the
// fleet does.
//
// The functions are pure, except Member.Follow, which acts on the breaker it
// is given. A Member is not safe for concurrent use: it belongs to whoever
// runs its process's rounds.
package quorum

import (
	"math"
	"time"

	"github.com/resilience-go/pipeline/policy/breaker"
)

// The states a process reports, one letter each.
const (
	// Open: the breaker refuses on its own evidence (Open, HalfOpen, or
	// Isolated by a local call). Only these count toward a quorum.
	Open byte = 'o'
	// Closed: the breaker is Closed or Recovering, or in shadow mode.
	Closed byte = 'c'
	// Following: the breaker refuses because the fleet told it to (a break
	// the fleet forced, or the fleet-wide isolation). Counted as seen, never
	// as open, so a quorum cannot hold itself up.
	Following byte = 'f'
)

// The fleet's defaults (fleet.Config's zero Refresh, TTL and Fraction
// stand for these), here so that the simulation runs with them.
const (
	// DefaultRefresh is how often a process publishes and reads the fleet's
	// view.
	DefaultRefresh = time.Second
	// DefaultStaleRefreshes is the TTL in refreshes.
	DefaultStaleRefreshes = 3
	// DefaultFraction is the share of the processes seen that must report
	// open, and be outnumbered: a strict majority.
	DefaultFraction = 0.5
)

// MinQuorum is the fewest open reports that make a quorum, whatever the
// configured count or fraction: one process failing alone never opens
// another.
const MinQuorum = 2

// Need returns how many of seen processes must report open to make a
// quorum: quorum when it is positive, else more than fraction of seen, and
// never fewer than MinQuorum.
func Need(seen, quorum int, fraction float64) int {
	q := quorum
	if q == 0 {
		q = int(math.Floor(fraction*float64(seen))) + 1
	}
	return max(q, MinQuorum)
}

// Reached reports whether open reports make a quorum of need.
func Reached(open, need int) bool { return open >= need }

// Tally counts the reports a process reads of one breaker's fleet.
type Tally struct {
	Seen, Open int
}

// Add counts a report of state written age ago: it is seen when it is at
// most ttl old (a negative age, a peer's clock ahead of the reader's, counts
// as fresh), and open when it is also an Open report.
func (t *Tally) Add(state byte, age, ttl time.Duration) {
	if age > ttl {
		return
	}
	t.Seen++
	if state == Open {
		t.Open++
	}
}

// Hold is the break the fleet forces on a closed breaker while a quorum
// reports its dependency open, for a fleet that runs a round every refresh:
// renewed every round, it runs out within twice the refresh once the view
// goes stale. A round renews it at most a refresh plus the round's timeout
// (half a refresh) after the previous one, so it never runs out between two
// renewals.
func Hold(refresh time.Duration) time.Duration { return 2 * refresh }

// Member is one process's side of one shared breaker: the break the fleet
// forced on it last, and whether the fleet-wide isolation is applied to it.
// The zero value is a breaker the fleet has not touched.
type Member struct {
	// ForcedEnds is the BreakEnds of the break the fleet forced last, the
	// zero time if none.
	ForcedEnds time.Time
	// Isolated is set while the fleet-wide isolation is applied to the
	// breaker.
	Isolated bool
}

// Ours reports whether the break the breaker serves, as snap reads it, is
// the one the fleet forced last: the breaker reads Open or HalfOpen and its
// break ends when that one does. A trip of its own, or a local IsolateFor,
// moves the end.
func (m *Member) Ours(snap breaker.Snapshot) bool {
	return (snap.State == breaker.Open || snap.State == breaker.HalfOpen) &&
		!m.ForcedEnds.IsZero() && snap.BreakEnds.Equal(m.ForcedEnds)
}

// Report returns what the process says of its breaker, read as snap.
func (m *Member) Report(snap breaker.Snapshot) byte {
	switch {
	case snap.Shadow: // a shadow breaker's opens are hypothetical
		return Closed
	case snap.State == breaker.Closed || snap.State == breaker.Recovering:
		return Closed
	case snap.State == breaker.Isolated && m.Isolated, m.Ours(snap):
		return Following
	}
	return Open
}

// Follow applies a quorum to b: it forces a Closed breaker open for hold
// (IsolateFor), or renews a break the fleet forced that b still serves. A
// breaker open on its own evidence, recovering, or probing after a break of
// its own is left to recover by itself. Follow reports whether it forced a
// break, and whether that break started one (false for a renewal).
func (m *Member) Follow(b *breaker.Breaker, hold time.Duration) (forced, started bool) {
	snap := b.Snapshot()
	ours := m.Ours(snap)
	if snap.State != breaker.Closed && !ours {
		return false, false
	}
	b.IsolateFor(hold)
	m.ForcedEnds = b.Snapshot().BreakEnds
	return true, !ours
}

package bulkhead

import (
	"time"

	"github.com/resilience-go/pipeline/criticality"
	"github.com/resilience-go/pipeline/internal/giveway"
)

// kept is the bulkhead's account of Config.Guarantees, under its lock.
type kept struct {
	on bool
	g  criticality.Guarantees
	// of is the slots kept for each level at the current limit, held the
	// slots each level's calls hold (both counted only when on).
	of, held [criticality.Levels]int
	// asked is when each level was last short of its guarantee (a call of
	// it found no free slot while it held fewer than its guarantee), as
	// the bulkhead's elapsed time; its unused guarantee is held back from
	// the other levels until giveway.Recovery after that. Negative: never.
	asked [criticality.Levels]time.Duration
	// until is when the latest of those hold-backs ends, or 0 when none
	// runs, so that a bulkhead whose guarantees nobody asked for lately
	// reads no clock to admit a call.
	until time.Duration
}

func newKept(g criticality.Guarantees) kept {
	k := kept{on: g != (criticality.Guarantees{}), g: g}
	for i := range k.asked {
		k.asked[i] = -giveway.Recovery
	}
	return k
}

// level is l as the bulkhead counts it: an unmarked or unknown level is
// Default.
func level(l criticality.Level) criticality.Level {
	if !l.Valid() {
		return criticality.Default
	}
	return l
}

// setKept computes each level's guarantee at the current limit.
func (b *Bulkhead) setKept() {
	for i := range b.kept.of {
		b.kept.of[i] = b.kept.g.Of(criticality.Level(i+1), b.limit)
	}
}

// owed reports whether calls of level l hold fewer slots than their
// guarantee: then a call of l takes any free slot.
func (b *Bulkhead) owed(l criticality.Level) bool {
	i := level(l) - 1
	return b.kept.on && b.kept.held[i] < b.kept.of[i]
}

// lent reports whether a call of level l, which holds its guarantee, may
// take a slot when used are taken without taking one that the other levels
// asked for lately: the slots they hold fewer than their guarantees are
// kept free for them for giveway.Recovery after each asked.
func (b *Bulkhead) lent(l criticality.Level, used int) bool {
	if b.kept.until == 0 {
		return true
	}
	now := b.elapsed.Read()
	if now >= b.kept.until {
		b.kept.until = 0
		return true
	}
	for i, asked := range b.kept.asked {
		if criticality.Level(i+1) != level(l) && now-asked < giveway.Recovery {
			used += max(0, b.kept.of[i]-b.kept.held[i])
		}
	}
	return used < b.limit
}

// short records that a call of level l for tenant t found no slot: if its
// level is owed its guarantee and its tenant was not what held it back,
// the level's unused guarantee is kept for it from now.
func (b *Bulkhead) short(l criticality.Level, t string) {
	if b.owed(l) && b.under(t, l) {
		now := b.elapsed.Read()
		b.kept.asked[level(l)-1] = now
		b.kept.until = max(now+giveway.Recovery, 1)
	}
}

// hold counts a slot taken (+1) or given back (-1) by a call of level l.
func (b *Bulkhead) hold(l criticality.Level, n int) {
	if b.kept.on {
		b.kept.held[level(l)-1] += n
	}
}

// nextOwed is the queued call a slot goes to first when used are taken, if
// one is free: the first in the queue's order whose level holds fewer
// slots than its guarantee and whose tenant may hold one more; mu must be
// held.
func (b *Bulkhead) nextOwed(used int) (*waiter, bool) {
	if used >= b.limit {
		return nil, false
	}
	for w := range b.queue.All() {
		if b.owed(w.level) && b.under(w.tenant, w.level) {
			return w, true
		}
	}
	return nil, false
}

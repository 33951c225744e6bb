// Package giveway is the state by which a limit makes lower levels give way
// to higher ones under overload: on top of the static rule of
// criticality.Shares, every refusal of a call of some level halves the
// share the levels below it may fill, and the halved shares grow back,
// linearly, over Recovery. So while Critical calls are refused, Sheddable
// ones are squeezed toward nothing (each may still take an empty limit),
// and once the overload passes they get their share back within a second.
// No level is ever given more than its share.
package giveway

import (
	"math"
	"time"

	"github.com/resilience-go/pipeline/criticality"
)

// Recovery is how long a share halved to nothing takes to grow back whole.
const Recovery = time.Second

// Gate is one limit's state. Its owner serializes every call (under the
// limit's own lock) and passes readings of one clock, of any epoch. The
// zero Gate honours the default shares with nothing given way.
type Gate struct {
	shares criticality.Shares
	// cut is how much of its share each level has given way, in [0, 1],
	// as of at; Critical (the last) never gives way.
	cut [criticality.Levels]float64
	at  time.Duration
	// squeezed reports whether any cut is above 0: only then does the gate
	// need the time (see Squeezed).
	squeezed bool
}

// New is a gate for shares, which must be valid.
func New(s criticality.Shares) Gate { return Gate{shares: s} }

// Squeezed reports whether some level has given way, so that the owner
// reads its clock for Admits only then.
func (g *Gate) Squeezed() bool { return g.squeezed }

// Admits reports whether a call of level l may take one more unit of a
// limit of size limit of which used are taken, at now (read only if
// Squeezed): as criticality.Shares.Admits, with l's share less what it has
// given way.
func (g *Gate) Admits(l criticality.Level, used, limit float64, now time.Duration) bool {
	if !g.squeezed || l == criticality.Critical {
		return g.shares.Admits(l, used, limit)
	}
	g.grow(now)
	return g.shares.Admits(l, used, limit*(1-g.cut[index(l)])) || used == 0 && limit >= 1
}

// Cap is the most units of a limit of size limit that calls of level l may
// hold at now (read only if Squeezed): the fewest taken at which Admits
// refuses l, so at least 1 for a limit of at least 1, and what
// criticality.Shares.Cap says while nothing gives way. A limit that bounds
// a part of a level's units (a bulkhead's tenants) takes its part of this.
func (g *Gate) Cap(l criticality.Level, limit int, now time.Duration) int {
	if limit <= 0 {
		return 0
	}
	lim := float64(limit)
	// Share gives the answer but for the rounding Admits does: start there
	// and step to where Admits turns, which is at most a unit away.
	n := min(max(1, int(math.Ceil(lim*g.Share(l, now)))), limit)
	for n > 1 && !g.Admits(l, float64(n-1), lim, now) {
		n--
	}
	for n < limit && g.Admits(l, float64(n), lim, now) {
		n++
	}
	return n
}

// Share is the fraction of a limit a call of level l may fill at now (read
// only if Squeezed): its share (criticality.Shares.Of) less what it has
// given way. A limit that counts in units of its own (a budget's tokens)
// applies it as Admits does.
func (g *Gate) Share(l criticality.Level, now time.Duration) float64 {
	if !g.squeezed || l == criticality.Critical {
		return g.shares.Of(l)
	}
	g.grow(now)
	return g.shares.Of(l) * (1 - g.cut[index(l)])
}

// Refused records that a call of level l was refused at now: every level
// below it gives way half of the share it still had.
func (g *Gate) Refused(l criticality.Level, now time.Duration) {
	g.grow(now)
	for i := range index(l) {
		g.cut[i] += (1 - g.cut[i]) / 2
		g.squeezed = true
	}
}

// Settles is how long, from now, until every level has its whole share
// back, if no call is refused meanwhile; 0 when none gives way.
func (g *Gate) Settles(now time.Duration) time.Duration {
	g.grow(now)
	most := 0.0
	for _, c := range g.cut {
		most = max(most, c)
	}
	return time.Duration(math.Ceil(most * float64(Recovery)))
}

// grow lets the cuts shrink back for the time since the last reading.
func (g *Gate) grow(now time.Duration) {
	d := now - g.at
	g.at = now
	if !g.squeezed || d <= 0 {
		return
	}
	back := float64(d) / float64(Recovery)
	g.squeezed = false
	for i := range g.cut {
		g.cut[i] = max(g.cut[i]-back, 0)
		if g.cut[i] > 0 {
			g.squeezed = true
		}
	}
}

// index is l's place in cut.
func index(l criticality.Level) int {
	if !l.Valid() {
		l = criticality.Default
	}
	return int(l) - 1
}

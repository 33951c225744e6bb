package criticality

import (
	"fmt"
	"math"
)

// Guarantees is the part of a concurrency limit kept for the calls of the
// levels below Critical, so that a flood of higher-level calls cannot
// starve them: the other side of [Shares], which keep the top of a limit
// for the higher levels. A level holding fewer slots than its guarantee
// takes any free slot, whatever its share and however the levels above
// press; a guarantee it leaves unused is lent to the other levels until
// it is asked for (the bulkhead's Config.Guarantees says how it comes
// back). Netflix's partitioned limits work the same way, with a limit's
// partitions in place of levels.
//
// The zero value guarantees nothing, so a limit behaves as [Shares] alone
// say. Critical calls need no guarantee: their share is the whole limit.
type Guarantees struct {
	// Default is the fraction of a limit kept for Default (and unmarked)
	// calls, in [0, 1).
	Default float64
	// Sheddable is the fraction kept for Sheddable calls, in [0, 1).
	Sheddable float64
}

// Validate reports the first impossible field of g, naming it, for a limit
// whose levels have shares s: each must lie in [0, 1) and within its
// level's share (a level cannot be promised more than it may fill), and
// together they must leave part of the limit to no level's guarantee, or
// a Critical call could find an idle limit closed.
func (g Guarantees) Validate(s Shares) error {
	switch {
	case !(g.Default >= 0 && g.Default < 1):
		return fmt.Errorf("criticality: Guarantees.Default %v is not in [0, 1)", g.Default)
	case !(g.Sheddable >= 0 && g.Sheddable < 1):
		return fmt.Errorf("criticality: Guarantees.Sheddable %v is not in [0, 1)", g.Sheddable)
	case g.Default+g.Sheddable >= 1:
		return fmt.Errorf("criticality: Guarantees.Default %v and Guarantees.Sheddable %v add up to the whole limit or more: a Critical call could find an idle limit closed", g.Default, g.Sheddable)
	}
	for _, l := range []Level{Default, Sheddable} {
		if g.of(l) > s.Of(l) {
			return fmt.Errorf("criticality: the guarantee of %v calls, %v, is above their share %v", l, g.of(l), s.Of(l))
		}
	}
	return nil
}

// Of is how many units of a limit of size limit are kept for calls of
// level l: l's fraction of it, rounded down (to a millionth of a unit, so
// that 10% of 30 is 3), and 0 for Critical.
func (g Guarantees) Of(l Level, limit int) int {
	if limit <= 0 {
		return 0
	}
	return int(math.Floor(math.Round(float64(limit)*g.of(l)*1e6) / 1e6))
}

func (g Guarantees) of(l Level) float64 {
	switch l {
	case Sheddable:
		return g.Sheddable
	case Critical:
		return 0
	}
	return g.Default
}

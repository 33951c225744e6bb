package criticality

import (
	"fmt"
	"math"
)

// The default shares of a limit that Default and Sheddable calls may fill
// (see Shares).
const (
	defaultShare   = 1
	sheddableShare = 0.75
)

// Shares is the one rule by which every limit of the library honours
// levels: a call of level l may take one more unit of a limit (a slot of a
// bulkhead or an adaptive limit, a token of a retry budget, a unit of a
// fleet quota) only while the units taken are fewer than l's share of the
// limit. Critical's share is the whole limit; Default's and Sheddable's are
// fractions of it, so the top of every limit is kept for the levels above
// them: as a limit fills, Sheddable calls are refused first, then Default
// ones, and at one instant a higher level is never refused while a lower
// one is admitted. A level may use any of its share that others leave
// free (a Sheddable call takes a slot Critical calls do not need), and
// every level may take a unit of an empty limit, however small its share,
// so no level waits on an idle limit.
//
// The zero value is the default shares: Default 1 and Sheddable 0.75. So
// an unmarked call may fill a limit as it could
// before levels existed (a bulkhead of 32 slots runs 32 unmarked calls),
// Sheddable calls leave the top quarter of every limit to the others, and
// Critical calls differ from Default ones where limits queue (they are
// served first) and where they displace waiting calls; set Default below 1
// to keep room for Critical calls too. Setting both to 1 treats every level
// alike but in queues.
type Shares struct {
	// Default is the fraction of a limit Default calls may fill, in (0, 1];
	// 0 means 1.
	Default float64
	// Sheddable is the fraction Sheddable calls may fill, in (0, Default];
	// 0 means 0.75.
	Sheddable float64
}

// Validate reports the first impossible field of s, naming it.
func (s Shares) Validate() error {
	d, sh := s.of(Default), s.of(Sheddable)
	switch {
	case !(d > 0 && d <= 1):
		return fmt.Errorf("criticality: Shares.Default %v is not in (0, 1]", s.Default)
	case !(sh > 0 && sh <= 1):
		return fmt.Errorf("criticality: Shares.Sheddable %v is not in (0, 1]", s.Sheddable)
	case sh > d:
		return fmt.Errorf("criticality: Shares.Sheddable %v is more than Shares.Default %v: a lower level would keep more of a limit than a higher one", sh, d)
	}
	return nil
}

// Of is the fraction of a limit calls of level l may fill: 1 for Critical,
// and Default's share for a level that does not exist (as From reads an
// unmarked call).
func (s Shares) Of(l Level) float64 {
	if l == Critical {
		return 1
	}
	return s.of(l)
}

func (s Shares) of(l Level) float64 {
	if l == Sheddable {
		if s.Sheddable != 0 {
			return s.Sheddable
		}
		return sheddableShare
	}
	if s.Default != 0 {
		return s.Default
	}
	return defaultShare
}

// Admits reports whether a call of level l may take one more unit of a
// limit of size limit, of which used are taken: whether used is less than
// l's share of limit (computed to a millionth of a unit, so that 70% of 10
// is 7, not a float's 7.000000000000001), or whether none is taken of a
// limit of at least 1, however small l's share. A NaN anywhere admits
// nothing.
func (s Shares) Admits(l Level, used, limit float64) bool {
	return used < max(s.fill(l, limit), min(limit, 1))
}

// fill is l's share of limit, to a millionth of a unit.
func (s Shares) fill(l Level, limit float64) float64 {
	return math.Round(limit*s.Of(l)*1e6) / 1e6
}

// Cap is the most units of a limit of size limit that calls of level l may
// hold at once: l's share of it, rounded up, and at least 1 (for a limit
// of at least 1). Limits that count whole units admit l while fewer than
// Cap are taken, as Admits does.
func (s Shares) Cap(l Level, limit int) int {
	if limit <= 0 {
		return 0
	}
	return max(1, int(math.Ceil(s.fill(l, float64(limit)))))
}

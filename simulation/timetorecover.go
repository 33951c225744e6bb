package simulation

import "time"

// recovery finds the times to recover after the last fault (see
// Report.TimeToRecover and Report.TimeToStable).
func recovery(faults []Interval, seconds []Second) (recovered bool, first time.Duration, stable bool, last time.Duration) {
	if len(faults) == 0 {
		return false, 0, false, 0
	}
	var end time.Duration
	for _, f := range faults {
		if f.To == 0 {
			return false, 0, false, 0
		}
		end = max(end, f.To)
	}
	good := func(s Second) bool { return ratio(s.Served, s.Offered) >= recoveredAvailability }
	from := int((end + time.Second - 1) / time.Second)
	firstGood, stableFrom := -1, -1
	for i := from; i < len(seconds); i++ {
		switch s := seconds[i]; {
		case s.Offered == 0:
		case !good(s):
			stableFrom = -1
		default:
			if firstGood < 0 {
				firstGood = i
			}
			if stableFrom < 0 {
				stableFrom = i
			}
		}
	}
	at := func(i int) time.Duration { return time.Duration(i)*time.Second - end }
	if firstGood < 0 {
		return false, 0, false, 0
	}
	if stableFrom < 0 {
		return true, at(firstGood), false, 0
	}
	return true, at(firstGood), true, at(stableFrom)
}

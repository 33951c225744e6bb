package breaker

import "fmt"

// State is what a breaker is doing with the attempts offered to it. The zero value
// is Closed.
type State uint8

const (
	// Closed admits every attempt and samples its outcome for the trip conditions.
	Closed State = iota
	// Open refuses every attempt until its break has elapsed, but for the
	// trickle of probes a trip's break lets through when Config.Recovery is
	// set (see [Recovery]); a trickled probe that succeeds fast moves it to
	// HalfOpen. The first attempt offered after the break moves it to HalfOpen
	// and becomes a probe.
	Open
	// HalfOpen admits at most Config.HalfOpenProbes probes at a time and refuses
	// the rest. Fast probes leading the slow ones by Config.ProbeSuccesses
	// close it (or, with Config.Recovery set, start its recovery ramp); one
	// failed probe opens it again with a longer break, and so do slow probes
	// leading the fast ones by Config.ProbeSlowLead, unless a ramp is
	// configured, which they then start held back.
	HalfOpen
	// Recovering admits a growing fraction of the attempts offered and refuses
	// the rest, until that fraction reaches 1 and the breaker closes; slow
	// calls hold the fraction, a failure halves it, and
	// Config.ConsecutiveFailures failures in a row open it again. Only a
	// breaker with Config.Recovery set enters it, from HalfOpen, instead of
	// closing (see [Recovery]).
	Recovering
	// Isolated refuses every attempt until Reset. Only Breaker.Isolate enters it.
	Isolated
)

// String returns the state's lower-case name, such as "half-open".
func (s State) String() string {
	switch s {
	case Closed:
		return "closed"
	case Open:
		return "open"
	case HalfOpen:
		return "half-open"
	case Recovering:
		return "recovering"
	case Isolated:
		return "isolated"
	}
	return fmt.Sprintf("breaker.State(%d)", uint8(s))
}

package fleet

import "time"

// Degraded reports that a round of the fleet could not reach Redis: from
// now on each process decides on its local breakers alone, breaks the fleet
// forced run out by themselves, and a fleet-wide isolation already applied
// stays applied. It is raised once per outage, with the first error. A
// quota.Quota (package fleet/quota) raises it too, with the Source
// {Stage: "quota", Name: its name}, when a fetch fails: the process then
// admits its local share.
type Degraded struct {
	Err error
	At  time.Time
}

// Name returns "fleet.degraded".
func (Degraded) Name() string { return "fleet.degraded" }

// Recovered reports that a round reached Redis again after a Degraded, and
// how long after it: the fleet's view is current again. A quota.Quota
// (package fleet/quota) raises it when a fetch succeeds again: the fleet's
// limit applies again.
type Recovered struct {
	After time.Duration
	At    time.Time
}

// Name returns "fleet.recovered".
func (Recovered) Name() string { return "fleet.recovered" }

// Followed reports that the fleet forced a closed local breaker open because
// Open of the Seen processes reported its dependency open, at least Need of
// them. It is raised when the fleet starts holding the breaker open, not at
// every renewal of the break.
type Followed struct {
	Breaker          string
	Open, Seen, Need int
	Break            time.Duration
	At               time.Time
}

// Name returns "fleet.followed".
func (Followed) Name() string { return "fleet.followed" }

// Switched reports that this process applied the fleet-wide switch of a
// breaker: Isolated true when it isolated the local breaker, false when the
// switch was cleared and it reset it.
type Switched struct {
	Breaker  string
	Isolated bool
	At       time.Time
}

// Name returns "fleet.switched".
func (Switched) Name() string { return "fleet.switched" }

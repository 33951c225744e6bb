package dashboard

import (
	"github.com/resilience-go/pipeline/health"
	"github.com/resilience-go/pipeline/policy/breaker"
)

// state is a breaker's state as the dashboard draws it: the breaker's own
// states, and none for a dependency without a breaker.
type state uint8

const (
	none state = iota
	closed
	open
	halfOpen
	recovering
	isolated
	unknown // a state this dashboard does not know, from a newer peer
)

// states maps the health view's spelling of each state, the breaker's own
// (breaker.State.String), to the dashboard's.
var states = map[string]state{
	breaker.Closed.String():     closed,
	breaker.Open.String():       open,
	breaker.HalfOpen.String():   halfOpen,
	breaker.Recovering.String(): recovering,
	breaker.Isolated.String():   isolated,
}

// parseState returns the state spelled s, unknown if it is none of them.
func parseState(s string) state {
	if st, ok := states[s]; ok {
		return st
	}
	return unknown
}

// stateOf returns the state of dep's breaker, none without one.
func stateOf(dep health.Dependency) state {
	if dep.Breaker == nil {
		return none
	}
	return parseState(dep.Breaker.State)
}

// String returns the state as the health view spells it, "none" and
// "unknown" for the dashboard's own two.
func (s state) String() string {
	switch s {
	case none:
		return "none"
	case closed:
		return breaker.Closed.String()
	case open:
		return breaker.Open.String()
	case halfOpen:
		return breaker.HalfOpen.String()
	case recovering:
		return breaker.Recovering.String()
	case isolated:
		return breaker.Isolated.String()
	}
	return "unknown"
}

// refusing reports whether a breaker in s refuses attempts: the states an
// operator looks for first.
func (s state) refusing() bool { return s == open || s == isolated || s == halfOpen }

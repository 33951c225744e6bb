package health

import (
	"fmt"

	"github.com/resilience-go/pipeline/policy/adaptive"
	"github.com/resilience-go/pipeline/policy/bulkhead"
	"github.com/resilience-go/pipeline/policy/ratelimit"
)

// Limit is a limit's use as it stands: of a bulkhead or an adaptive
// limit, the calls inside (InUse) of the calls allowed (Limit) and the calls
// waiting (Queued); of a rate limit, the tokens taken and not yet earned
// back (InUse, negative never) of its burst (Limit).
type Limit struct {
	Kind   string  `json:"kind"`
	Name   string  `json:"name"`
	InUse  float64 `json:"in_use"`
	Limit  float64 `json:"limit"`
	Queued int     `json:"queued,omitempty"`
}

// Limits returns the source of one dependency named name whose limits are
// limits: each a *bulkhead.Bulkhead, an *adaptive.Limiter or a
// *ratelimit.Limiter. Reading them takes nothing and changes nothing.
// Limits panics, naming its type, on any other value, and on a nil one.
func Limits(name string, limits ...any) Source {
	for _, l := range limits {
		var isNil bool
		switch l := l.(type) {
		case *bulkhead.Bulkhead:
			isNil = l == nil
		case *adaptive.Limiter:
			isNil = l == nil
		case *ratelimit.Limiter:
			isNil = l == nil
		default:
			panic(fmt.Sprintf("health: Limits: %T is not a limit the health view reads (a *bulkhead.Bulkhead, *adaptive.Limiter or *ratelimit.Limiter)", l))
		}
		if isNil {
			panic(fmt.Sprintf("health: Limits: a nil %T (did you ignore the error from its New?)", l))
		}
	}
	return sourceFunc(func(yield func(Dependency) bool) {
		d := Dependency{Name: name, Limits: make([]Limit, 0, len(limits))}
		for _, l := range limits {
			d.Limits = append(d.Limits, readLimit(l))
		}
		yield(d)
	})
}

// readLimit reads l, one of the kinds Limits takes.
func readLimit(l any) Limit {
	switch l := l.(type) {
	case *bulkhead.Bulkhead:
		return Limit{Kind: "bulkhead", Name: l.Name(), InUse: float64(l.InFlight()), Limit: float64(l.Limit()), Queued: l.Queued()}
	case *adaptive.Limiter:
		return Limit{Kind: "adaptive", Name: l.Name(), InUse: float64(l.InFlight()), Limit: float64(l.Limit())}
	case *ratelimit.Limiter:
		burst := float64(l.Burst())
		return Limit{Kind: "ratelimit", Name: l.Name(), InUse: min(max(burst-l.Tokens(), 0), burst), Limit: burst}
	}
	return Limit{}
}

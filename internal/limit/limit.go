// Package limit makes a shared limit (a rate limiter, a bulkhead, an
// adaptive limit) the stage it stands for, for the places that take one as
// a value and build the stage for a result type of theirs: shed's handler,
// the gRPC shedder and standard.Compose.
package limit

import (
	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/policy/adaptive"
	"github.com/resilience-go/pipeline/policy/bulkhead"
	"github.com/resilience-go/pipeline/policy/ratelimit"
)

// Names lists the limits Stage takes, for an error that refuses another
// value.
const Names = "*ratelimit.Limiter, *bulkhead.Bulkhead, *adaptive.Limiter"

// Stage returns the stage of l for T, as l's Guard makes it, and whether l
// is one of the limits. A nil limit is refused by its Guard with a panic:
// check for one first.
func Stage[T any](l any) (pipeline.Policy[T], bool) {
	switch l := l.(type) {
	case *ratelimit.Limiter:
		return ratelimit.Guard[T](l), true
	case *bulkhead.Bulkhead:
		return bulkhead.Guard[T](l), true
	case *adaptive.Limiter:
		return adaptive.Guard[T](l), true
	}
	return nil, false
}

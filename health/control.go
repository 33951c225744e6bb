package health

import (
	"github.com/resilience-go/pipeline/internal/control"
	"github.com/resilience-go/pipeline/policy/breaker"
)

// The dashboard's way to the breaker behind a dependency (package
// internal/control): health.read keeps it in Dependency's unexported
// field, and only code of this module can read it there.
func init() {
	control.Breaker = func(dep any) *breaker.Breaker {
		d, _ := dep.(Dependency)
		return d.breaker
	}
}

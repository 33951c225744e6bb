package hedge

import "github.com/resilience-go/pipeline/internal/hedgerule"

// RuleOf is p's rule, for the tests of the stage's decisions.
func RuleOf[T any](p *Policy[T]) *hedgerule.Rule { return p.rule }

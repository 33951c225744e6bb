package pipeline

import (
	"errors"
	"fmt"

	"github.com/resilience-go/pipeline/internal/kind"
)

// Severity says how bad a [Problem] is.
type Severity uint8

const (
	// Warning: the composition works, but not as its order suggests; it may be
	// what its author meant. [New] accepts it.
	Warning Severity = iota + 1
	// Error: part of the composition can never act. [New] refuses it.
	Error
)

// String returns "warning" or "error".
func (s Severity) String() string {
	switch s {
	case Warning:
		return "warning"
	case Error:
		return "error"
	}
	return fmt.Sprintf("pipeline.Severity(%d)", uint8(s))
}

// Problem is a composition of stages that does not do what it seems to do.
// Outer and Inner are the positions (from 1, outermost first, as given to
// [New]) of the two stages involved.
type Problem struct {
	Severity     Severity
	Outer, Inner int
	// Text says what goes wrong and what to do instead.
	Text string
}

// Error returns the problem in words, with its severity and positions.
func (p Problem) Error() string {
	return fmt.Sprintf("%s: stages %d and %d: %s", p.Severity, p.Outer, p.Inner, p.Text)
}

// Check reports the compositions among policies that do not do what their
// order suggests. It knows the stages that describe themselves ([Described]):
// all of this module's. The checks, each for every pair of stages with the
// first outside the second:
//
//   - Error: a timeout inside another timeout whose limit is not shorter. The
//     inner one can never fire first, so an attempt that hangs is never cut
//     short to leave time for a retry.
//   - Warning: a breaker outside a retry. It then sees whole calls, not
//     attempts: a call that failed three times is one failure, and a trip
//     during the first attempt does not refuse the second. Some want exactly
//     that, so it is allowed.
//   - Warning: a hedge outside a breaker. Every copy then asks the breaker on
//     its own, so a half-open breaker's probes are hedged and a lost copy is
//     recorded as cancelled; and the hedge cannot see the breaker's pressure
//     unless its Config.Breaker is set.
//   - Warning: a retry inside another retry. Their attempts multiply (three
//     times three is nine), a retry storm in miniature unless one budget pays
//     for both; an inner retry of one narrow error class can be deliberate.
//   - Warning: a fallback inside a retry or a breaker. It answers the failures
//     before they reach them, so the retry never retries and the breaker
//     never learns; a fallback belongs outermost.
//   - Warning: a measured ceiling outside a retry. It bounds the whole call,
//     retries and backoffs included, where it is meant to cut one attempt.
//   - Warning: a bulkhead or an adaptive limit inside a breaker. The time a
//     call waits in its queue counts in the attempt's duration, so a queue
//     that fills reads to the breaker as a slow dependency.
//   - Warning: fault injection outside a retry. The injected faults never
//     reach the retry or the breaker inside it, which is usually what the
//     game day meant to test.
//
// The standard pipeline (package standard) raises none of them. A nil policy
// is skipped: [New] refuses it on its own.
func Check[T any](policies ...Policy[T]) []Problem {
	return check(describe(policies))
}

// check is Check on what the stages say of themselves.
func check(infos []StageInfo) []Problem {
	var found []Problem
	add := func(s Severity, i, j int, format string, args ...any) {
		found = append(found, Problem{Severity: s, Outer: i + 1, Inner: j + 1, Text: fmt.Sprintf(format, args...)})
	}
	for i, out := range infos {
		for j := i + 1; j < len(infos); j++ {
			in := infos[j]
			switch {
			case out.Kind == kind.Timeout && in.Kind == kind.Timeout && in.Timeout >= out.Timeout:
				add(Error, i, j, "the inner timeout (%v) is not shorter than the outer one (%v), so it can never fire first: make it shorter or remove it", in.Timeout, out.Timeout)
			case out.Kind == kind.Breaker && in.Kind == kind.Retry:
				add(Warning, i, j, "the breaker is outside the retry, so it samples whole calls, not attempts: put it inside to have each attempt sampled")
			case out.Kind == kind.Hedge && in.Kind == kind.Breaker:
				add(Warning, i, j, "the hedge is outside the breaker, so each copy is admitted on its own: put the breaker outside to have one attempt sampled once")
			case out.Kind == kind.Retry && in.Kind == kind.Retry:
				add(Warning, i, j, "a retry inside a retry multiplies their attempts: use one retry stage, or one budget for both")
			case (out.Kind == kind.Retry || out.Kind == kind.Breaker) && in.Kind == kind.Fallback:
				add(Warning, i, j, "the fallback is inside the %s, so it answers failures before the %s sees them: put the fallback outermost", out.Kind, out.Kind)
			case out.Kind == kind.Ceiling && in.Kind == kind.Retry:
				add(Warning, i, j, "the ceiling is outside the retry, so it bounds the whole call, not each attempt: put it inside")
			case out.Kind == kind.Breaker && (in.Kind == kind.Bulkhead || in.Kind == kind.Adaptive):
				add(Warning, i, j, "the %s is inside the breaker, so time queued for a slot reads to the breaker as a slow dependency: put it outside", in.Kind)
			case out.Kind == kind.Fault && in.Kind == kind.Retry:
				add(Warning, i, j, "the faults are injected outside the retry, so neither it nor a breaker inside it sees them: put the fault stage inside")
			}
		}
	}
	return found
}

// refuse joins the problems of the Error severity into one error, or returns
// nil if there are none.
func refuse(problems []Problem) error {
	var errs []error
	for _, p := range problems {
		if p.Severity == Error {
			errs = append(errs, p)
		}
	}
	return errors.Join(errs...)
}

// Check reports the compositions among p's stages that do not do what their
// order suggests: the warnings of [Check], since New refuses the errors.
func (p *Pipeline[T]) Check() []Problem { return check(p.stages) }

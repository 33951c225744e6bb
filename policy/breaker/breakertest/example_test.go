package breakertest_test

import (
	"fmt"
	"time"

	"pgregory.net/rapid"

	"github.com/resilience-go/pipeline/policy/breaker"
	"github.com/resilience-go/pipeline/policy/breaker/breakertest"
)

// Property-testing your own breaker configuration. In a test file of your own it
// is one line:
//
//	func TestCheckoutBreaker(t *testing.T) {
//		rapid.Check(t, breakertest.StateMachine(checkoutBreaker))
//	}
//
// This example runs the same property outside a test, reporting to a minimal
// rapid.TB, so that its result can be printed.
func Example() {
	checkoutBreaker := breaker.Config{
		ConsecutiveFailures: 3,
		FailureRatio:        0.25,
		MinimumCalls:        10,
		SlowCallThreshold:   time.Second,
		BreakDuration:       5 * time.Second,
		HalfOpenProbes:      2,
		ProbeSuccesses:      3,
	}
	r := &reporter{}
	rapid.Check(r, breakertest.StateMachine(checkoutBreaker))
	fmt.Println("property holds:", !r.Failed())
	// Output: property holds: true
}

// reporter is a rapid.TB that records failures instead of failing a test.
type reporter struct{ failed bool }

func (*reporter) Helper()              {}
func (*reporter) Name() string         { return "Example" }
func (*reporter) Logf(string, ...any)  {}
func (*reporter) Log(...any)           {}
func (*reporter) Skipf(string, ...any) {}
func (*reporter) Skip(...any)          {}
func (*reporter) SkipNow()             {}
func (r *reporter) Errorf(f string, a ...any) {
	r.failed = true
	fmt.Printf(f+"\n", a...)
}
func (r *reporter) Error(a ...any)            { r.Errorf("%v", fmt.Sprint(a...)) }
func (r *reporter) Fatalf(f string, a ...any) { r.Errorf(f, a...) }
func (r *reporter) Fatal(a ...any)            { r.Error(a...) }
func (r *reporter) FailNow()                  { r.failed = true }
func (r *reporter) Fail()                     { r.failed = true }
func (r *reporter) Failed() bool              { return r.failed }

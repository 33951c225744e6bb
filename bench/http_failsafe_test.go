package bench_test

// The failsafehttp rows of the HTTP benchmarks.

import (
	"net/http"

	"github.com/failsafe-go/failsafe-go"
	fsbudget "github.com/failsafe-go/failsafe-go/budget"
	"github.com/failsafe-go/failsafe-go/circuitbreaker"
	"github.com/failsafe-go/failsafe-go/failsafehttp"
	fstimeout "github.com/failsafe-go/failsafe-go/timeout"

	"github.com/resilience-go/pipeline/policy/breaker"
	"github.com/resilience-go/pipeline/policy/retry"
	"github.com/resilience-go/pipeline/standard"
)

func init() { failsafeHTTP = newFailsafeHTTP }

// newFailsafeHTTP is failsafehttp's round tripper with the composition of the
// other benchmarks' card: a 30 s timeout (our whole-call default), its HTTP
// retry policy (retries 5xx, 429 and errors, honours Retry-After) with three
// attempts and a budget, and a count-based breaker set to our defaults that
// counts 5xx responses as failures.
func newFailsafeHTTP(base http.RoundTripper) *http.Client {
	cb := circuitbreaker.NewBuilder[*http.Response]().
		HandleIf(func(r *http.Response, err error) bool { return err != nil || r.StatusCode >= 500 }).
		WithFailureThresholdRatio(breaker.DefaultConsecutiveFailures, breaker.DefaultConsecutiveFailures).
		WithSuccessThreshold(breaker.DefaultProbeSuccesses).
		WithDelay(breaker.DefaultBreakDuration).
		Build()
	rp := failsafehttp.NewRetryPolicyBuilder().WithMaxAttempts(retry.DefaultMaxAttempts).WithBudget(fsbudget.New()).Build()
	policies := []failsafe.Policy[*http.Response]{fstimeout.New[*http.Response](standard.DefaultTimeout), rp, cb}
	return &http.Client{Transport: failsafehttp.NewRoundTripper(base, policies...)}
}

package bench_test

// The failsafehttp rows of the HTTP benchmarks.

import (
	"net/http"

	"github.com/failsafe-go/failsafe-go"
	fsbudget "github.com/failsafe-go/failsafe-go/budget"
	"github.com/failsafe-go/failsafe-go/circuitbreaker"
	"github.com/failsafe-go/failsafe-go/failsafehttp"
	"github.com/failsafe-go/failsafe-go/hedgepolicy"
	fstimeout "github.com/failsafe-go/failsafe-go/timeout"

	"github.com/resilience-go/pipeline/bench"
	"github.com/resilience-go/pipeline/internal/breakerconf"
	"github.com/resilience-go/pipeline/internal/hedgerule"
	"github.com/resilience-go/pipeline/internal/retryrule"
)

func init() {
	failsafeHTTP = []httpRow{{"failsafe", newFailsafeHTTP}, {"failsafe-card", newFailsafeHTTPCard}}
}

// newFailsafeHTTP is failsafehttp's round tripper with the composition of the
// other benchmarks' card: a 30 s timeout (our whole-call default), its HTTP
// retry policy (retries 5xx, 429 and errors, honours Retry-After) with three
// attempts and a budget, and a count-based breaker set to our defaults that
// counts 5xx responses as failures. It is our default transport less the
// hedge and the attempt timeout.
func newFailsafeHTTP(base http.RoundTripper) *http.Client {
	rp := failsafehttp.NewRetryPolicyBuilder().WithMaxAttempts(retryrule.DefaultMaxAttempts).WithBudget(fsbudget.New()).Build()
	policies := []failsafe.Policy[*http.Response]{fstimeout.New[*http.Response](bench.PresetTimeout), rp, failsafeHTTPBreaker()}
	return &http.Client{Transport: failsafehttp.NewRoundTripper(base, policies...)}
}

// newFailsafeHTTPCard is failsafehttp's round tripper with our default
// transport's composition, stage for stage: newFailsafeHTTP's, then a hedge
// sharing the retry's budget and a 10 s attempt timeout inside it. The
// hedge's delay is fixed at our hedge's shortest (hedgerule.DefaultMinDelay,
// 10 ms), the delay ours has on loopback, where a GET takes tens of
// microseconds: armed on every request, it never fires, in either client.
func newFailsafeHTTPCard(base http.RoundTripper) *http.Client {
	funds := fsbudget.New()
	rp := failsafehttp.NewRetryPolicyBuilder().WithMaxAttempts(retryrule.DefaultMaxAttempts).WithBudget(funds).Build()
	hp := hedgepolicy.NewBuilderWithDelay[*http.Response](hedgerule.DefaultMinDelay).WithBudget(funds).Build()
	policies := []failsafe.Policy[*http.Response]{
		fstimeout.New[*http.Response](bench.PresetTimeout), rp, failsafeHTTPBreaker(), hp,
		fstimeout.New[*http.Response](bench.PresetAttemptTimeout),
	}
	return &http.Client{Transport: failsafehttp.NewRoundTripper(base, policies...)}
}

// failsafeHTTPBreaker is a count-based breaker set to our defaults that
// counts errors and 5xx responses as failures.
func failsafeHTTPBreaker() circuitbreaker.CircuitBreaker[*http.Response] {
	return circuitbreaker.NewBuilder[*http.Response]().
		HandleIf(func(r *http.Response, err error) bool { return err != nil || r.StatusCode >= 500 }).
		WithFailureThresholdRatio(breakerconf.DefaultConsecutiveFailures, breakerconf.DefaultConsecutiveFailures).
		WithSuccessThreshold(breakerconf.DefaultProbeSuccesses).
		WithDelay(breakerconf.DefaultBreakDuration).
		Build()
}

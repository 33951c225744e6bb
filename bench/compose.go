package bench

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"time"

	"github.com/failsafe-go/failsafe-go"
	fsbudget "github.com/failsafe-go/failsafe-go/budget"
	"github.com/failsafe-go/failsafe-go/circuitbreaker"
	"github.com/failsafe-go/failsafe-go/hedgepolicy"
	"github.com/failsafe-go/failsafe-go/retrypolicy"
	fstimeout "github.com/failsafe-go/failsafe-go/timeout"
	"github.com/sony/gobreaker/v2"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/budget"
	"github.com/resilience-go/pipeline/internal/breakerconf"
	"github.com/resilience-go/pipeline/internal/hedgerule"
	"github.com/resilience-go/pipeline/internal/retryrule"
	"github.com/resilience-go/pipeline/latency"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/breaker"
	"github.com/resilience-go/pipeline/policy/hedge"
	"github.com/resilience-go/pipeline/policy/retry"
	"github.com/resilience-go/pipeline/policy/timeout"
)

// Path selects which outcome the work of a benchmark produces.
type Path int

const (
	// OK is the success path: every attempt returns a value and no error.
	OK Path = iota
	// Failing is the steady failing path: every attempt fails with ErrUnavailable,
	// an error every library counts as a failure of the dependency (ours
	// classifies it Transient, so it is retried and is breaker evidence). Each
	// breaker is configured with a trip condition it can never reach, keeping the
	// same per-attempt bookkeeping, so the benchmark measures the failing path
	// itself rather than an open breaker's refusals; each retry waits no backoff,
	// so it measures the machinery and not a sleep; our budget is sized so it never
	// refuses, as failsafe-go's never does for one caller at a time.
	Failing
)

// String names the path as the benchmarks do: "ok" or "fail".
func (p Path) String() string {
	if p == Failing {
		return "fail"
	}
	return "ok"
}

// Paths are both paths, in the order the benchmarks run them.
var Paths = []Path{OK, Failing}

// ErrUnavailable is the error of every attempt on the failing path. Nothing marks
// it, so our pipeline classifies it as an unknown error: Transient.
var ErrUnavailable = errors.New("bench: dependency unavailable")

// Timeout is the timeout of every timeout stage; the work never comes near it.
const Timeout = time.Second

// HedgeDelay is the hedge delay of failsafe-go's hedge policy: far above the
// nanoseconds the work takes, so the hedge is armed (its timer is set) but never
// fires.
const HedgeDelay = 100 * time.Millisecond

//go:noinline
func succeed() (int, error) { return 1, nil }

//go:noinline
func fail() (int, error) { return 0, ErrUnavailable }

// PeerWork returns the work the peers run on path p.
func PeerWork(p Path) func() (int, error) {
	if p == Failing {
		return fail
	}
	return succeed
}

// OursWork returns the work our pipelines run on path p.
func OursWork(p Path) pipeline.Func[int] {
	if p == Failing {
		return func(context.Context) (int, error) { return fail() }
	}
	return func(context.Context) (int, error) { return succeed() }
}

// must returns v, or panics with err: configurations here are fixed, so an error
// is a bug in the harness.
func must[V any](v V, err error) V {
	if err != nil {
		panic(err)
	}
	return v
}

// ---- ours ----

// ourHedge builds our hedge stage for the card pipeline, sharing the card's
// breaker and budget, and armed on every call: calls are repeatable, and the
// estimator starts with the samples the stage needs. The work takes nanoseconds,
// so the delay is the 10 ms minimum and the hedge never fires.
func ourHedge(b *breaker.Breaker, bud *budget.Budget) pipeline.Policy[int] {
	est := must(latency.New(latency.Config{}))
	for range hedgerule.DefaultMinSamples {
		est.Record(est.Now(), time.Microsecond)
	}
	return must(hedge.New[int](hedge.Config{Estimator: est, Breaker: b, Budget: bud, Repeatable: true}))
}

// OursEmpty is a pipeline with no stages: the cost of Execute itself.
func OursEmpty() *pipeline.Pipeline[int] { return pipeline.New[int]() }

// ourBreaker is a breaker with the default settings on the success path and,
// on the failing path, an unreachable consecutive-failure trip and no relative
// failure ratio (against a dependency that always fails, its trip point rises
// to 1, which a window of nothing but failures reaches).
func ourBreaker(p Path) *breaker.Breaker {
	cfg := breaker.Config{}
	if p == Failing {
		cfg.ConsecutiveFailures = math.MaxInt
		cfg.Failures.Disabled = true
	}
	return must(breaker.New(cfg))
}

// ourBudget is a budget with the default settings on the success path, and one
// that can never run dry on the failing path.
func ourBudget(p Path) *budget.Budget {
	cfg := budget.Config{}
	if p == Failing {
		cfg = budget.Config{RefillPerSecond: budget.MaxCapacity, Capacity: budget.MaxCapacity}
	}
	return must(budget.New(cfg))
}

// ourRetry is a retry stage paid for by bud: default settings on the success
// path (where no backoff is ever computed) and no backoff on the failing path.
func ourRetry(p Path, bud *budget.Budget) *retry.Policy[int] {
	cfg := retry.Config{Budget: bud}
	if p == Failing {
		cfg.Backoff = retry.BackoffFunc(func(int, outcome.Verdict, rand.Source) time.Duration { return 0 })
	}
	return must(retry.New[int](cfg))
}

// OursBreaker is the breaker alone: pipeline.New(breaker.Guard(b)).
func OursBreaker(p Path) *pipeline.Pipeline[int] {
	return pipeline.New[int](breaker.Guard[int](ourBreaker(p)))
}

// OursRetryBreaker is retry (paid for by a budget) around the breaker.
func OursRetryBreaker(p Path) *pipeline.Pipeline[int] {
	return pipeline.New[int](ourRetry(p, ourBudget(p)), breaker.Guard[int](ourBreaker(p)))
}

// OursCard is the card order without the hedge: timeout, retry with budget,
// breaker, all with their defaults (the timeout trusts the work to honour its
// context, as failsafe-go's does).
func OursCard(p Path) *pipeline.Pipeline[int] {
	return pipeline.New(ourCard(p, false, false)...)
}

// OursCardGuarded is OursCard with the timeout's opt-in guard, which runs the
// work on a goroutine of its own so that it can abandon work that ignores its
// context.
func OursCardGuarded(p Path) *pipeline.Pipeline[int] {
	return pipeline.New(ourCard(p, false, true)...)
}

// OursCardHedged is the full card, with the hedge armed but never firing.
func OursCardHedged(p Path) *pipeline.Pipeline[int] {
	return pipeline.New(ourCard(p, true, false)...)
}

// OursCardHedgedGuarded is OursCardHedged with the timeout's guard.
func OursCardHedgedGuarded(p Path) *pipeline.Pipeline[int] {
	return pipeline.New(ourCard(p, true, true)...)
}

func ourCard(p Path, hedged, guarded bool) []pipeline.Policy[int] {
	b, bud := ourBreaker(p), ourBudget(p)
	stages := []pipeline.Policy[int]{
		must(timeout.New[int](timeout.Config{Timeout: Timeout, Abandon: guarded})),
		ourRetry(p, bud),
		breaker.Guard[int](b),
	}
	if hedged {
		stages = append(stages, ourHedge(b, bud))
	}
	return stages
}

// ---- sony/gobreaker ----

// GoBreaker is a gobreaker with the settings its documentation describes as the
// defaults (trip after more than 5 consecutive failures, one half-open request)
// and our default break of 15 s. On the failing path ReadyToTrip never trips.
func GoBreaker(p Path) *gobreaker.CircuitBreaker[int] {
	st := gobreaker.Settings{Name: "bench", Timeout: breakerconf.DefaultBreakDuration}
	if p == Failing {
		st.ReadyToTrip = func(gobreaker.Counts) bool { return false }
	}
	return gobreaker.NewCircuitBreaker[int](st)
}

// ---- failsafe-go ----

// failsafeBreaker is failsafe-go's count-based breaker set to our defaults: open
// after 5 consecutive failures, 15 s delay, close after 2 successes. On the
// failing path it needs 6 failures out of the last 5, which never happens, with
// the same 5-slot window to maintain.
func failsafeBreaker(p Path) circuitbreaker.CircuitBreaker[int] {
	threshold := uint(breakerconf.DefaultConsecutiveFailures)
	if p == Failing {
		threshold++
	}
	return circuitbreaker.NewBuilder[int]().
		WithFailureThresholdRatio(threshold, breakerconf.DefaultConsecutiveFailures).
		WithSuccessThreshold(breakerconf.DefaultProbeSuccesses).
		WithDelay(breakerconf.DefaultBreakDuration).
		Build()
}

// failsafeRetry is failsafe-go's retry with 3 attempts, its default of no delay,
// and a retry budget (failsafe-go's budget limits the fraction of in-flight
// executions that are retries or hedges; with one caller it never refuses).
func failsafeRetry(b fsbudget.Budget) retrypolicy.RetryPolicy[int] {
	return retrypolicy.NewBuilder[int]().WithMaxAttempts(retryrule.DefaultMaxAttempts).WithBudget(b).Build()
}

// The failsafe-go executors are built once with the context the benchmarks use,
// the cheapest way to call failsafe-go: Get runs the composition with no
// per-call setup of ours to pay for.

// FailsafeEmpty is an executor with no policies.
func FailsafeEmpty() failsafe.Executor[int] {
	return failsafe.With[int]().WithContext(context.Background())
}

// FailsafeBreaker is failsafe-go's breaker alone.
func FailsafeBreaker(p Path) failsafe.Executor[int] {
	return failsafe.With[int](failsafeBreaker(p)).WithContext(context.Background())
}

// FailsafeRetryBreaker is retry (with a budget) around the breaker.
func FailsafeRetryBreaker(p Path) failsafe.Executor[int] {
	return failsafe.With[int](failsafeRetry(fsbudget.New()), failsafeBreaker(p)).WithContext(context.Background())
}

// FailsafeCard is timeout, retry with a budget, breaker.
func FailsafeCard(p Path) failsafe.Executor[int] {
	return failsafe.With[int](fstimeout.New[int](Timeout), failsafeRetry(fsbudget.New()), failsafeBreaker(p)).
		WithContext(context.Background())
}

// FailsafeCardHedged is the full card: timeout, retry, breaker and a hedge whose
// fixed delay (HedgeDelay) is armed on every call but never reached, both
// sharing one budget.
func FailsafeCardHedged(p Path) failsafe.Executor[int] {
	b := fsbudget.New()
	hedge := hedgepolicy.NewBuilderWithDelay[int](HedgeDelay).WithBudget(b).Build()
	return failsafe.With[int](fstimeout.New[int](Timeout), failsafeRetry(b), failsafeBreaker(p), hedge).
		WithContext(context.Background())
}

// ---- refusals ----

// RefusalBreak is the break of the open breakers of the refusal benchmarks: far
// longer than any run, so that every call is refused.
const RefusalBreak = time.Hour

// OursRefusal is retry (paid for by a budget, with the refusal pause off, as a
// server shedding requests would set it) around a breaker that one failure has
// opened: every call is refused before the work runs.
func OursRefusal() *pipeline.Pipeline[int] {
	b := must(breaker.New(breaker.Config{ConsecutiveFailures: 1, BreakDuration: RefusalBreak}))
	b.Done(must(b.Admit()), outcome.Verdict{Kind: outcome.Transient})
	r := must(retry.New[int](retry.Config{Budget: ourBudget(OK), RefusalPause: -1}))
	return pipeline.New[int](r, breaker.Guard[int](b))
}

// FailsafeRefusal is failsafe-go's retry around its breaker, opened, with
// retries aborted on the breaker's refusal (by default failsafe-go would retry
// it, twice, at once).
func FailsafeRefusal() failsafe.Executor[int] {
	cb := circuitbreaker.NewBuilder[int]().WithDelay(RefusalBreak).Build()
	cb.Open()
	r := retrypolicy.NewBuilder[int]().WithMaxAttempts(retryrule.DefaultMaxAttempts).
		WithBudget(fsbudget.New()).AbortOnErrors(circuitbreaker.ErrOpen).Build()
	return failsafe.With[int](r, cb).WithContext(context.Background())
}

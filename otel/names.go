package pipelineotel

import (
	"strings"

	"go.opentelemetry.io/otel/attribute"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/breaker"
)

// ScopeName is the name of the instrumentation scope (the meter and the
// tracer) every instrument and span of this package belongs to.
const ScopeName = "github.com/resilience-go/pipeline/otel"

// The instruments, by name. The names are stable: a dashboard or an alert
// may rely on them, and TestInstrumentNamesAreStable fails if one changes.
// docs/telemetry.md says what each measures.
const (
	// MetricCallDuration is a histogram of calls (Execute to its return), in
	// seconds, by pipeline and outcome; its count is the number of calls.
	MetricCallDuration = "resilience.call.duration"
	// MetricAttemptDuration is a histogram of attempts, in seconds, by
	// pipeline and verdict; its count is the number of attempts.
	MetricAttemptDuration = "resilience.attempt.duration"
	// MetricStops counts the stops of every stage, once, at the stage that
	// made them, by pipeline, stage and reason.
	MetricStops = "resilience.stops"
	// MetricRefusalRetryAfter is a histogram of the retry-after hint, in
	// seconds, of every refusal by our own stages (an open breaker, an empty
	// budget, a rate limiter, a bulkhead or adaptive limit); its count is the
	// number of refusals.
	MetricRefusalRetryAfter = "resilience.refusal.retry_after"
	// MetricRetryDelay is a histogram of the wait before every retry, in
	// seconds, by pipeline, stage and the verdict of the attempt retried; its
	// count is the number of retries.
	MetricRetryDelay = "resilience.retry.delay"
	// MetricHedgeDelay is a histogram of the delay after which every hedge
	// was sent, in seconds; its count is the number of hedges sent.
	MetricHedgeDelay = "resilience.hedge.delay"
	// MetricHedgeSkips counts the hedges that were due and not sent, by
	// reason.
	MetricHedgeSkips = "resilience.hedge.skips"
	// MetricHedgeWins counts the hedges whose result the hedge stage kept,
	// as its [Attempts] stage sees them.
	MetricHedgeWins = "resilience.hedge.wins"
	// MetricTimeouts counts the deadlines of timeout stages that passed, and
	// the attempts ceiling stages cut (stage kind ceiling).
	MetricTimeouts = "resilience.timeouts"
	// MetricAbandoned counts the attempts whose work ignored its context past
	// a timeout's grace.
	MetricAbandoned = "resilience.abandoned"
	// MetricBreakerState is an observable gauge: 1 for every observed
	// breaker, with its current state as an attribute.
	MetricBreakerState = "resilience.breaker.state"
	// MetricBreakerPressure is an observable gauge of every observed
	// breaker's pressure, from 0 to 1 (see breaker.Breaker.Pressure).
	MetricBreakerPressure = "resilience.breaker.pressure"
	// MetricBreakerTransitions counts the state changes of breakers, by the
	// state they went to and the cause.
	MetricBreakerTransitions = "resilience.breaker.transitions"
	// MetricBreakerRefusals counts the attempts breakers refused (or, in
	// shadow mode, would have refused), by the refusing state.
	MetricBreakerRefusals = "resilience.breaker.refusals"
	// MetricBudgetTokens is an observable gauge of every observed budget's
	// balance, in tokens.
	MetricBudgetTokens = "resilience.budget.tokens"
	// MetricBudgetUtilization is an observable gauge of the fraction of every
	// observed budget that is spent, from 0 (full) to 1 (empty).
	MetricBudgetUtilization = "resilience.budget.utilization"
	// MetricAdmissionWait is a histogram of how long calls waited to be let
	// in by a rate limiter (for a token) or a bulkhead or adaptive limit (for
	// a slot), in seconds, by pipeline and stage; its count is the number of
	// calls that waited. Calls let in at once are not in it.
	MetricAdmissionWait = "resilience.admission.wait"
	// MetricConcurrencyLimit, MetricConcurrencyInFlight and
	// MetricConcurrencyQueued are observable gauges of every observed
	// bulkhead and adaptive limit: how many calls may be inside at once, how
	// many are, and how many wait for a slot, by stage kind and name.
	MetricConcurrencyLimit    = "resilience.concurrency.limit"
	MetricConcurrencyInFlight = "resilience.concurrency.in_flight"
	MetricConcurrencyQueued   = "resilience.concurrency.queued"
	// MetricAdaptiveRevisions counts the revisions of adaptive limits that
	// moved the limit or its baseline, by stage name and what the revision
	// found.
	MetricAdaptiveRevisions = "resilience.adaptive.revisions"
	// MetricRateLimitTokens is an observable gauge of every observed rate
	// limiter's tokens: how many calls it would let in at once now, negative
	// while calls wait for tokens promised to them.
	MetricRateLimitTokens = "resilience.ratelimit.tokens"
	// MetricFallbacks counts the results a fallback stage replaced, by
	// pipeline, stage, what the replaced result was and whether the fallback
	// failed too.
	MetricFallbacks = "resilience.fallbacks"
	// MetricCeilingLimit is an observable gauge of every observed ceiling
	// stage's current ceiling, in seconds, reported once the stage is armed.
	// Its cuts are counted in MetricTimeouts.
	MetricCeilingLimit = "resilience.ceiling.limit"
	// MetricFaults counts the faults fault-injection stages injected, by
	// pipeline, stage and kind of fault.
	MetricFaults = "resilience.faults"
)

// The attributes of the instruments and span events, by key. Every value is
// drawn from a small fixed set or is a name fixed when a pipeline, stage,
// breaker or budget was built; none is an error's text, a URL or a key of
// unbounded variety.
const (
	// AttrPipeline is the pipeline's name (pipeline.Source.Pipeline).
	AttrPipeline = attribute.Key("resilience.pipeline.name")
	// AttrStageKind is the kind of stage: timeout, retry, breaker, hedge,
	// ratelimit, bulkhead, adaptive, fallback, ceiling, fault, pipeline (the
	// pipeline's own events) or a custom stage's kind.
	AttrStageKind = attribute.Key("resilience.stage.kind")
	// AttrStageName is the stage's own name.
	AttrStageName = attribute.Key("resilience.stage.name")
	// AttrVerdict is an attempt's verdict: ok, transient, throttled or
	// permanent; on resilience.attempt.duration, canceled for an attempt its
	// caller ended (a hedge's losing copy), whose kind is permanent.
	AttrVerdict = attribute.Key("resilience.verdict")
	// AttrOutcome is how a call ended: ok, error (an error that is not a
	// stop, returned as it came) or the stop's reason (see AttrStopReason).
	AttrOutcome = attribute.Key("resilience.outcome")
	// AttrStopReason is a stop's reason: dependency_unavailable,
	// budget_exhausted, attempts_exhausted, deadline, canceled, permanent,
	// hint_beyond_deadline, rate_limited, concurrency_limited or too_little_time.
	AttrStopReason = attribute.Key("resilience.stop.reason")
	// AttrBreaker is a breaker's name.
	AttrBreaker = attribute.Key("resilience.breaker.name")
	// AttrBreakerState is a breaker's state: closed, open, half_open,
	// recovering or isolated.
	AttrBreakerState = attribute.Key("resilience.breaker.state")
	// AttrBreakerCause is why a breaker changed state: consecutive_failures,
	// failure_ratio, relative_failure_ratio, slow_calls, probe_failed,
	// probe_slow, break_elapsed, probes_succeeded, trickle_succeeded,
	// ramp_failed, ramp_done, isolated, forced or reset.
	AttrBreakerCause = attribute.Key("resilience.breaker.cause")
	// AttrBreakerShadow is true for a breaker in shadow mode, whose
	// transitions and refusals changed nothing; it is absent otherwise.
	AttrBreakerShadow = attribute.Key("resilience.breaker.shadow")
	// AttrBudget is a budget's name.
	AttrBudget = attribute.Key("resilience.budget.name")
	// AttrHedgeSkipReason is why a hedge was not sent: breaker, budget or
	// extra (the attempts armed had not earned it, hedge.Config.MaxExtra).
	AttrHedgeSkipReason = attribute.Key("resilience.hedge.skip_reason")
	// AttrAttempt is the attempt's number, from 1 (span events and spans
	// only).
	AttrAttempt = attribute.Key("resilience.attempt")
	// AttrHedgeCopy is the copy of a hedged attempt, 0 for the attempt itself
	// and 1, 2, ... for its hedges (span events and spans only).
	AttrHedgeCopy = attribute.Key("resilience.hedge.copy")
	// AttrDelay is a retry's or a hedge's delay, and AttrDuration an
	// attempt's duration, in seconds (span events only).
	AttrDelay    = attribute.Key("resilience.delay")
	AttrDuration = attribute.Key("resilience.duration")
	// AttrRetryAfter is a refusal's retry-after hint, in seconds (span events
	// only).
	AttrRetryAfter = attribute.Key("resilience.retry_after")
	// AttrAdaptiveWhy is what a revision of an adaptive limit found: grew,
	// queued, slower or throttled. Held is never emitted, since a revision
	// that holds moves nothing; unknown stands for a finding added later.
	AttrAdaptiveWhy = attribute.Key("resilience.adaptive.why")
	// AttrFallbackReason is what a fallback replaced, in the values of
	// AttrOutcome: a stop's reason, error, or ok when the stage's When chose
	// a success.
	AttrFallbackReason = attribute.Key("resilience.fallback.reason")
	// AttrFallbackFailed is true when the fallback failed too, so that the
	// caller got the original error; it is absent otherwise.
	AttrFallbackFailed = attribute.Key("resilience.fallback.failed")
	// AttrFaultKind is the kind of an injected fault: latency, transient,
	// throttled, permanent or value.
	AttrFaultKind = attribute.Key("resilience.fault.kind")
	// AttrWait is how long a call waited to be let in, in seconds (span
	// events only).
	AttrWait = attribute.Key("resilience.wait")
)

// The span events, by name, added to the recording span in an event's
// context, and the span the Attempts stage starts.
const (
	// EventAttempt is an attempt that finished (pipeline.AttemptFinished).
	EventAttempt = "resilience.attempt"
	// EventRetry is a retry scheduled (retry.Scheduled).
	EventRetry = "resilience.retry"
	// EventHedge is a hedge sent (hedge.Hedged).
	EventHedge = "resilience.hedge"
	// EventSkip is a hedge that was due and not sent (hedge.Skipped).
	EventSkip = "resilience.hedge.skipped"
	// EventStop is a stage's refusal or stop (pipeline.Stopped).
	EventStop = "resilience.stop"
	// EventTimeout is a timeout stage's deadline passing, or a ceiling
	// stage's cut (timeout.TimedOut, with Measured set for a cut).
	EventTimeout = "resilience.timeout"
	// EventAbandon is guarded work abandoned (pipeline.Abandoned).
	EventAbandon = "resilience.abandoned"
	// EventLate is abandoned work returning at last (pipeline.LateReturn).
	EventLate = "resilience.late_return"
	// EventWait is a call let in after a wait by a rate limiter, a bulkhead
	// or an adaptive limit (pipeline.Waited).
	EventWait = "resilience.wait"
	// EventRevision is a revision of an adaptive limit (adaptive.Revision).
	EventRevision = "resilience.adaptive.revision"
	// EventFallback is a fallback stage's call of its Func
	// (fallback.Executed).
	EventFallback = "resilience.fallback"
	// EventFault is a fault injected (fault.Injected).
	EventFault = "resilience.fault"
	// SpanAttempt is the name of the span the [Attempts] stage starts for
	// each attempt and each hedged copy.
	SpanAttempt = "resilience.attempt"
)

// Attribute values that are not names of the pipeline's own types.
const (
	outcomeOK     = "ok"
	outcomeError  = "error"
	skipOther     = "other"
	reasonUnknown = "unknown"
)

// verdicts is every kind of verdict, indexed by outcome.Kind.
var verdicts = [...]string{outcome.OK: "ok", outcome.Transient: "transient", outcome.Throttled: "throttled", outcome.Permanent: "permanent"}

// verdictIndex maps a kind beyond the known ones to the last slot, permanent,
// rather than let a future kind index out of range.
func verdictIndex(k outcome.Kind) int { return min(int(k), len(verdicts)-1) }

// canceledVerdict is the verdict value of an attempt's duration when the
// attempt was ended by its caller (a hedge's losing copy, a caller that gave
// up): its kind, Permanent, would count it among the dependency's failures.
const canceledVerdict = "canceled"

// attemptIndex is the slot of an attempt's verdict v among the verdicts
// and, last, canceledVerdict.
func attemptIndex(v outcome.Verdict) int {
	if v.Canceled {
		return len(verdicts)
	}
	return verdictIndex(v.Kind)
}

// reasons is every stop reason, indexed by pipeline.Reason; 0 is a stop
// without one.
var reasons = [...]string{
	0:                              reasonUnknown,
	pipeline.DependencyUnavailable: "dependency_unavailable",
	pipeline.BudgetExhausted:       "budget_exhausted",
	pipeline.AttemptsExhausted:     "attempts_exhausted",
	pipeline.Deadline:              "deadline",
	pipeline.Canceled:              "canceled",
	pipeline.Permanent:             "permanent",
	pipeline.HintBeyondDeadline:    "hint_beyond_deadline",
	pipeline.RateLimited:           "rate_limited",
	pipeline.ConcurrencyLimited:    "concurrency_limited",
	pipeline.TooLittleTime:         "too_little_time",
}

// maxReasons is how many reasons have attribute sets of their own: the
// known ones and room for those a later version adds, which are named after
// their words (see reasonName). A reason beyond it counts as unknown.
const maxReasons = 16

// reasonIndex is the slot of reason r: r itself, or 0 (unknown) beyond
// maxReasons.
func reasonIndex(r pipeline.Reason) int {
	if int(r) >= maxReasons {
		return 0
	}
	return int(r)
}

// reasonName is the attribute value of the reason in slot i: its name in
// reasons, or, for a reason this package does not know, its words in snake
// case ("rate limited" is rate_limited).
func reasonName(i int) string {
	if i < len(reasons) {
		return reasons[i]
	}
	return snake(pipeline.Reason(i).String())
}

// states is every breaker state, indexed by breaker.State.
var states = [...]string{breaker.Closed: "closed", breaker.Open: "open", breaker.HalfOpen: "half_open", breaker.Recovering: "recovering", breaker.Isolated: "isolated"}

// stateName is s's attribute value.
func stateName(s breaker.State) string {
	if int(s) < len(states) {
		return states[s]
	}
	return snake(s.String())
}

// causeName is c's attribute value: its words, in snake case, with the one
// exception of CauseForced, whose words ("forced open") say more than the
// attribute needs.
func causeName(c breaker.Cause) string {
	if c == breaker.CauseForced {
		return "forced"
	}
	return snake(c.String())
}

// snake turns words into snake case: "probe failed" is "probe_failed".
func snake(s string) string {
	return strings.Map(func(r rune) rune {
		if r == ' ' || r == '-' {
			return '_'
		}
		return r
	}, s)
}

// skipIndex is the slot of a hedge's reason for not sending a copy.
func skipIndex(why string) int {
	switch why {
	case "breaker":
		return 0
	case "budget":
		return 1
	case "extra":
		return 2
	}
	return 3
}

// skips is every reason for a skipped hedge, indexed by skipIndex.
var skips = [...]string{"breaker", "budget", "extra", skipOther}

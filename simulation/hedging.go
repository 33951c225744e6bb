package simulation

import (
	"cmp"
	"errors"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/resilience-go/pipeline/budget"
	"github.com/resilience-go/pipeline/criticality"
	"github.com/resilience-go/pipeline/internal/hedgerule"
	"github.com/resilience-go/pipeline/latency"
	"github.com/resilience-go/pipeline/policy/breaker"
	"github.com/resilience-go/pipeline/policy/hedge"
)

// Hedge configures a process's hedging, which follows the rules of the hedge
// stage (package policy/hedge) placed as in the library's card, inside the
// breaker: the breaker admits each attempt once and records one verdict for all
// its copies. Every call is taken to be repeatable. The process's breaker (if
// any) and budget (if any) are the hedge's, as the card shares them, and each
// process measures its attempts with a real *latency.Estimator of its own on
// the run's clock. The zero value is the hedge stage's default: a hedge after
// the p95 of the last 30 s, never sooner than 10 ms, once 20 successes have
// been measured, with at most 2 copies in flight.
type Hedge struct {
	// Quantile of the measured latency that sets the hedge delay, in (0, 1].
	// Zero means 0.95.
	Quantile float64
	// MinDelay is the shortest hedge delay. Zero means 10 ms; it must not be
	// negative.
	MinDelay time.Duration
	// MinSamples is how many samples the estimator must hold before an attempt
	// is hedged. Zero means 20; it must not be
	// negative.
	MinSamples int
	// MaxAttempts is the most copies of one attempt in flight, the first
	// included; each hedge after the first waits another delay. Zero means
	// 2; otherwise it must be at least 2.
	MaxAttempts int
	// MaxExtra bounds the hedges sent as a fraction of the attempts armed. Zero
	// means the hedge stage's default (see [hedge.Config].MaxExtra).
	MaxExtra float64
	// Window is how far back the process's estimator looks. Zero means
	// [latency.DefaultWindow] (30 s); it must not be negative.
	Window time.Duration
}

// validate reports every setting of h that cannot work, in the words of the
// hedge stage's and the estimator's own validation.
func (h *Hedge) validate() error {
	return errors.Join(h.stage().Validate(), latency.Config{Window: h.Window}.Validate())
}

// stage returns h as the hedge stage's Config.
func (h *Hedge) stage() hedge.Config {
	return hedge.Config{Quantile: h.Quantile, MinDelay: h.MinDelay, MinSamples: h.MinSamples, MaxAttempts: h.MaxAttempts, MaxExtra: h.MaxExtra, Repeatable: true}
}

// hedger is one process's hedging: the hedge stage's own rule, sharing the
// process's breaker and budget as the card does, whose decisions (Delay when
// an attempt starts, Permit when a hedge is due) the simulation calls, and
// its estimator. The estimator is built at time 0 on the run's clock, so its
// Now is the run's virtual time, which the simulation passes directly.
type hedger struct {
	rule        *hedgerule.Rule
	est         *latency.Estimator
	maxAttempts int
}

// newHedger returns the hedging h configures for a process with breaker b and
// budget bud (either may be nil), with an estimator on clock, or nil when h is
// nil.
func newHedger(h *Hedge, clock clockwork.Clock, b *breaker.Breaker, bud *budget.Budget) (*hedger, error) {
	if h == nil {
		return nil, nil
	}
	est, err := latency.New(latency.Config{Window: h.Window, Clock: clock})
	if err != nil {
		return nil, err
	}
	if err := h.stage().Validate(); err != nil {
		return nil, err
	}
	rule := hedgerule.New(hedgerule.Settings{Estimator: est, Quantile: h.Quantile, MinDelay: h.MinDelay, MinSamples: h.MinSamples,
		MaxAttempts: h.MaxAttempts, MaxExtra: h.MaxExtra, Breaker: b, Budget: bud})
	return &hedger{rule: rule, est: est, maxAttempts: cmp.Or(h.MaxAttempts, hedgerule.DefaultMaxAttempts)}, nil
}

// armed reports whether an attempt starting at now may be hedged, and after
// what delay: the stage's own decision (hedgerule.Rule.Delay). A nil hedger
// never arms.
func (h *hedger) armed(now time.Duration) (time.Duration, bool) {
	if h == nil {
		return 0, false
	}
	return h.rule.Delay(now)
}

// refuse reports whether a hedge due now may not be sent, by the stage's own
// decision (hedgerule.Rule.Permit), which pays for a hedge it permits.
func (h *hedger) refuse() bool { return h.rule.Permit(criticality.Default) != "" }

// record feeds the estimator one latency sample d, observed at now. A nil
// hedger measures nothing.
func (h *hedger) record(now, d time.Duration) {
	if h != nil {
		h.est.Record(now, d)
	}
}

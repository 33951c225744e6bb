// Package hedgerule holds the hedge stage's decisions, written once:
// package hedge acts on them around real attempts, and the simulation plays
// them on its own clock, so that a simulated call hedges exactly as a real
// one would.
package hedgerule

import (
	"cmp"
	"sync/atomic"
	"time"

	"github.com/resilience-go/pipeline/budget"
	"github.com/resilience-go/pipeline/criticality"
	"github.com/resilience-go/pipeline/latency"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/breaker"
)

// The defaults of a hedge's zero-valued settings, and the breaker
// condition; package hedge documents each under its own name.
const (
	DefaultQuantile    = 0.95
	DefaultMinDelay    = 10 * time.Millisecond
	DefaultMinSamples  = 20
	DefaultMaxAttempts = 2
	MinExtra           = 0.01
	MaxPressure        = 0.5
)

// Settings are a hedge stage's, each zero meaning its default, as
// hedge.Config says; they must be valid (hedge.Config.Validate).
type Settings struct {
	Estimator   *latency.Estimator // not nil
	Quantile    float64
	MinDelay    time.Duration
	MinSamples  int
	MaxAttempts int
	MaxExtra    float64
	Breaker     *breaker.Breaker // nil for none
	Budget      *budget.Budget   // nil for none
}

// Rule is the decisions of one hedge stage: when an attempt is armed and
// after what delay (Delay), and whether a due hedge may be sent (Permit).
type Rule struct {
	est        *latency.Estimator
	quantile   float64
	minDelay   time.Duration
	minSamples int
	breaker    *breaker.Breaker
	budget     *budget.Budget
	// earned is the hedges the armed attempts have earned and no hedge has
	// spent, in millionths; see saved.
	earned      atomic.Int64
	share, most int64 // MaxExtra, and MaxAttempts-1, in millionths
}

// micro is the unit of Rule.earned: a millionth of a hedge.
const micro = 1_000_000

// New returns the rule of s, with its defaults.
func New(s Settings) *Rule {
	r := &Rule{
		est:        s.Estimator,
		quantile:   cmp.Or(s.Quantile, DefaultQuantile),
		minDelay:   cmp.Or(s.MinDelay, DefaultMinDelay),
		minSamples: cmp.Or(s.MinSamples, DefaultMinSamples),
		breaker:    s.Breaker,
		budget:     s.Budget,
	}
	extra := s.MaxExtra
	if extra <= 0 {
		extra = max(1-r.quantile, MinExtra)
	}
	r.share = int64(extra * micro)
	r.most = int64(cmp.Or(s.MaxAttempts, DefaultMaxAttempts)-1) * micro
	r.earned.Store(r.most) // a new stage may hedge one attempt at once
	return r
}

// Delay is the decision when an attempt of a repeatable call starts at now
// (a reading of the estimator's clock): whether it is armed and after what
// delay its hedge is due. It is armed when the estimator holds MinSamples
// samples and the breaker, if any, is under MaxPressure or in shadow mode;
// the delay is the estimator's Quantile, never below MinDelay. An armed
// attempt earns its share of a hedge (MaxExtra).
func (r *Rule) Delay(now time.Duration) (time.Duration, bool) {
	d, n := r.est.Quantile(now, r.quantile)
	if n < r.minSamples || r.pressed() {
		return 0, false
	}
	r.earn(r.share, r.saved(n))
	return max(d, r.minDelay), true
}

// Permit is the decision when a hedge of level l is due: it asks the
// breaker, then what the armed attempts have earned, then the budget, and
// returns "" and spends one hedge and one budget token if the hedge may be
// sent, or returns why not ("breaker", "extra" or "budget"); a refused
// hedge is not charged.
func (r *Rule) Permit(l criticality.Level) string {
	if r.pressed() {
		return "breaker"
	}
	if !r.spend() {
		return "extra"
	}
	if _, ok := r.budget.Withdraw(l); !ok {
		r.earn(micro, r.most) // not sent: not spent (at most one attempt's worth, so the bound holds)
		return "budget"
	}
	return ""
}

// pressed reports whether the breaker, if any, holds hedges back: it is
// not in shadow mode and its pressure is at MaxPressure or above.
func (r *Rule) pressed() bool {
	return r.breaker != nil && !r.breaker.Shadow() && r.breaker.Pressure() >= MaxPressure
}

// saved is the most hedges, in millionths, that may be saved up when the
// estimator holds n samples: what a second of attempts earns at the rate
// they reached the estimator, and never less than one attempt's hedges.
func (r *Rule) saved(n int) int64 {
	perSecond := float64(n) * float64(time.Second) / float64(r.est.Window())
	return max(r.most, int64(perSecond*float64(r.share)))
}

// earn credits n millionths of a hedge, up to most.
func (r *Rule) earn(n, most int64) {
	for {
		e := r.earned.Load()
		if next := max(min(e+n, most), e); next == e || r.earned.CompareAndSwap(e, next) {
			return
		}
	}
}

// spend takes one hedge from what was earned, and reports false if less
// than one is there.
func (r *Rule) spend() bool {
	for {
		e := r.earned.Load()
		if e < micro {
			return false
		}
		if r.earned.CompareAndSwap(e, e-micro) {
			return true
		}
	}
}

// Acceptable reports whether a copy's verdict ends the race: a success, or
// a Permanent failure that a copy of the same request would only repeat.
func Acceptable(v outcome.Verdict) bool {
	return v.Kind == outcome.OK || (v.Kind == outcome.Permanent && !v.Canceled && !v.SelfImposed)
}

package simulation

import (
	"fmt"

	"github.com/resilience-go/pipeline/standard"
)

// Preset returns the client that cfg's standard pipeline is (standard.New):
// the whole-call timeout (Deadline), the retry with its backoff, attempts
// and refusal pause, paid for by the budget, the breaker exactly as
// standard.Config.BreakerConfig builds it (its recovery ramp and trickle on
// unless NoRecovery), the hedge with its quantile, delays, copies, MaxExtra
// and the estimator's window (unless NoHedge), and the attempt timeout, all
// with the preset's defaults where cfg leaves a field zero, so that a
// simulation judges what users get rather than a copy of it. What a run
// cannot model is left out: cfg's names, clock, random sources and hooks
// (the run supplies its own), and the estimator's Slices (the run's
// estimators use the default). It returns cfg's own validation errors.
func Preset(cfg standard.Config) (Client, error) {
	if err := cfg.Validate(); err != nil {
		return Client{}, fmt.Errorf("simulation: Preset: %w", err)
	}
	total, attempt := cfg.Timeouts()
	b, funds := cfg.BreakerConfig(), cfg.Budget
	c := Client{
		Breaker:        &b,
		Budget:         &funds,
		Retry:          &Retry{MaxAttempts: cfg.Retry.MaxAttempts, Backoff: cfg.Retry.Backoff, RefusalPause: cfg.Retry.RefusalPause},
		AttemptTimeout: attempt,
		Deadline:       total,
	}
	if !cfg.NoHedge {
		h := cfg.Hedge
		c.Hedge = &Hedge{Quantile: h.Quantile, MinDelay: h.MinDelay, MinSamples: h.MinSamples, MaxAttempts: h.MaxAttempts, MaxExtra: h.MaxExtra, Window: cfg.Estimator.Window}
	}
	return c, nil
}

// WithoutBreaker returns c with no breaker and no hedge (which the breaker
// steers): the same retries, budget and timeouts alone, the client a breaker
// is judged against.
func (c Client) WithoutBreaker() Client {
	c.Breaker, c.Hedge = nil, nil
	return c
}

package standard

import (
	"cmp"
	"errors"
	"fmt"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/budget"
	"github.com/resilience-go/pipeline/latency"
	"github.com/resilience-go/pipeline/policy/breaker"
	"github.com/resilience-go/pipeline/policy/hedge"
	"github.com/resilience-go/pipeline/policy/retry"
	"github.com/resilience-go/pipeline/policy/timeout"
)

// Defaults of the two timeouts, which have no default in package timeout.
const (
	// defaultTimeout bounds a whole call, its retries and the reading of its
	// value included: the total request timeout of .NET's standard resilience
	// handler.
	defaultTimeout = 30 * time.Second
	// defaultAttemptTimeout bounds each attempt, and each copy of a hedged
	// one: .NET's attempt timeout. A third of the whole call leaves room for a
	// retry after an attempt that hung.
	defaultAttemptTimeout = 10 * time.Second
)

// Config configures the standard pipeline of one dependency. Its zero value is
// the recommended pipeline with every default. Each field overrides the stage
// it names; the shared state (one budget, one estimator, one breaker) is wired
// by New, so the fields that would wire it by hand are refused.
type Config struct {
	// Name names the dependency: the pipeline (pipeline.Options.Name), each of
	// its stages and its breaker, budget and estimator carry it, so that their
	// events and stop errors say which dependency they concern. A stage's own
	// Name in Retry, Breaker, Hedge, Budget or Estimator wins over it. Empty
	// means unnamed.
	Name string
	// Timeout bounds the whole call, and the reading of a value the
	// pipeline holds until it is released (a response body) with it, as
	// http.Client.Timeout does; a call marked with timeout.UntilReturn is
	// bounded until it returns only. Zero means 30 s.
	Timeout time.Duration
	// AttemptTimeout bounds each attempt until it returns: a value returned
	// in time is not cut by it while it is read. Zero means 10 s, or half
	// of Timeout if that is shorter; it must be shorter than Timeout, or a
	// timed-out attempt would leave no time to retry.
	AttemptTimeout time.Duration
	// Retry configures the retry stage; its Budget must be nil (the pipeline's
	// budget is Budget's).
	Retry retry.Config
	// Budget configures the one budget that pays for retries and hedges.
	Budget budget.Config
	// Breaker configures the breaker. Its Recovery nil means a recovery ramp
	// with every default (see NoRecovery).
	Breaker breaker.Config
	// NoRecovery turns the breaker's recovery ramp off: it then closes as soon
	// as its probes succeed.
	NoRecovery bool
	// Hedge configures the hedge stage, which sends a second copy of a
	// repeatable call (see hedge.Repeatable) still running at the p95 of recent
	// latency. Its Breaker, Budget and Estimator must be nil: New wires the
	// pipeline's own.
	Hedge hedge.Config
	// NoHedge leaves the hedge stage out.
	NoHedge bool
	// Estimator configures the latency estimator the hedge reads.
	Estimator latency.Config
	// Clock is the clock of every stage and of the shared state. Nil means
	// real time.
	Clock clockwork.Clock
}

// Validate reports every setting that cannot work, each naming its field,
// joined into one error; nil for a usable Config.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("standard: Config."+format, args...))
	}
	if c.Timeout < 0 {
		bad("Timeout must not be negative (0 means the default %v), got %v", defaultTimeout, c.Timeout)
	}
	if c.AttemptTimeout < 0 {
		bad("AttemptTimeout must not be negative (0 means the default %v), got %v", defaultAttemptTimeout, c.AttemptTimeout)
	}
	if total, attempt := c.Timeouts(); c.AttemptTimeout > 0 && attempt >= total {
		bad("AttemptTimeout must be shorter than the whole call's Timeout (%v), got %v", total, attempt)
	}
	if c.NoRecovery && c.Breaker.Recovery != nil {
		bad("NoRecovery is set, and so is Breaker.Recovery: choose one")
	}
	if c.Retry.Budget != nil {
		bad("Retry.Budget must be nil: the pipeline's budget is configured by Config.Budget")
	}
	if c.Hedge.Breaker != nil || c.Hedge.Budget != nil || c.Hedge.Estimator != nil {
		bad("Hedge.Breaker, Hedge.Budget and Hedge.Estimator must be nil: the pipeline wires its own")
	}
	for _, err := range []error{c.Retry.Validate(), c.Budget.Validate(), c.BreakerConfig().Validate(), c.Hedge.Validate(), c.Estimator.Validate()} {
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Timeouts returns the whole call's timeout and the attempt's, as New sets
// them: Timeout and AttemptTimeout, or their defaults. An integration that
// builds pipelines of its own beside the preset's (for calls it must not
// send twice, say) reads them here.
func (c Config) Timeouts() (total, attempt time.Duration) {
	total = c.Timeout
	if total == 0 {
		total = defaultTimeout
	}
	attempt = c.AttemptTimeout
	if attempt == 0 {
		attempt = min(defaultAttemptTimeout, total/2)
	}
	return total, attempt
}

// BreakerConfig returns the configuration New builds the breaker from:
// Breaker, named after the dependency, on the pipeline's clock, with the
// recovery ramp (and its trickle) on unless NoRecovery is set. A simulation of
// the preset (simulation.Preset) runs a breaker built from it.
func (c Config) BreakerConfig() breaker.Config {
	b := c.Breaker
	b.Name = cmp.Or(b.Name, c.Name)
	if b.Recovery == nil && !c.NoRecovery {
		b.Recovery = &breaker.Recovery{}
	}
	if b.Clock == nil {
		b.Clock = c.Clock
	}
	return b
}

// Pipeline is the standard pipeline of one dependency, with the state its
// stages share, for health checks and tests: read the breaker's Snapshot, the
// budget's Tokens, the estimator's Quantile. Execute it as any pipeline; it is
// safe for concurrent use.
type Pipeline[T any] struct {
	*pipeline.Pipeline[T]
	Breaker   *breaker.Breaker
	Budget    *budget.Budget
	Estimator *latency.Estimator
}

// New builds the recommended pipeline for one dependency, T written once:
//
//	timeout (Timeout) -> retry (paid by Budget) -> breaker -> hedge -> timeout (AttemptTimeout) -> fn
//
// The retry and the hedge share one budget; the hedge reads and feeds one
// estimator and sends no copy while the breaker is under pressure. It returns
// an error naming every setting of cfg that cannot work.
func New[T any](cfg Config) (*Pipeline[T], error) { return assemble[T](cfg, nil, nil) }

// NewUntimed builds cfg's pipeline for calls to the dependency of beside
// whose attempts take a time of another kind than beside's: the opening or
// the first response of a gRPC stream, beside the same target's unary calls.
// It shares beside's breaker and budget, so that a failing dependency is one
// breaker and one budget, but its breaker stage records verdicts without
// durations (breaker.GuardUntimed) and its hedge reads an estimator of its
// own (the returned Pipeline's), so that these attempts set neither the
// breaker's normal latency nor beside's hedge delay. cfg's Breaker and Budget
// settings are beside's, and are not read.
func NewUntimed[T any](cfg Config, beside *Pipeline[T]) (*Pipeline[T], error) {
	if beside == nil {
		return nil, errors.New("standard: NewUntimed: beside is nil")
	}
	return assemble(cfg, nil, beside)
}

// assemble is New with the stages outer placed outside the preset's, the first
// outermost (see ScopesConfig.Outer), or, with beside, NewUntimed; it refuses
// a composition that pipeline.Check judges an error rather than let
// pipeline.New panic.
func assemble[T any](cfg Config, outer []pipeline.Policy[T], beside *Pipeline[T]) (*Pipeline[T], error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	total, attempt := cfg.Timeouts()
	var funds *budget.Budget
	var brk *breaker.Breaker
	var guard pipeline.Policy[T]
	if beside != nil {
		funds, brk = beside.Budget, beside.Breaker
		guard = breaker.GuardUntimed[T](brk)
	} else {
		bud := cfg.Budget
		bud.Name = cmp.Or(bud.Name, cfg.Name)
		if bud.Clock == nil {
			bud.Clock = cfg.Clock
		}
		var err error
		if funds, err = budget.New(bud); err != nil {
			return nil, err
		}
		if brk, err = breaker.New(cfg.BreakerConfig()); err != nil {
			return nil, err
		}
		guard = breaker.Guard[T](brk)
	}
	est := cfg.Estimator
	est.Name = cmp.Or(est.Name, cfg.Name)
	if est.Clock == nil {
		est.Clock = cfg.Clock
	}
	reads, err := latency.New(est)
	if err != nil {
		return nil, err
	}
	r := cfg.Retry
	r.Name = cmp.Or(r.Name, cfg.Name)
	r.Budget = funds
	retries, err := retry.New[T](r)
	if err != nil {
		return nil, err
	}
	whole, err := timeout.New[T](timeout.Config{Name: cfg.Name, Timeout: total})
	if err != nil {
		return nil, err
	}
	// The attempt timeout decides when to try again; once an attempt has
	// returned its value there is nothing to try again, so the value (a
	// response body still being read) is bounded by the whole call's alone.
	each, err := timeout.New[T](timeout.Config{Name: cfg.Name, Timeout: attempt, UntilReturn: true})
	if err != nil {
		return nil, err
	}
	stages := make([]pipeline.Policy[T], 0, len(outer)+5)
	stages = append(stages, outer...)
	stages = append(stages, whole, retries, guard)
	if !cfg.NoHedge {
		h := cfg.Hedge
		h.Name = cmp.Or(h.Name, cfg.Name)
		h.Breaker, h.Budget, h.Estimator = brk, funds, reads
		if h.Clock == nil {
			h.Clock = cfg.Clock
		}
		hedges, err := hedge.New[T](h)
		if err != nil {
			return nil, err
		}
		stages = append(stages, hedges)
	}
	stages = append(stages, each)
	if len(outer) > 0 {
		for _, problem := range pipeline.Check(stages...) {
			if problem.Severity == pipeline.Error {
				return nil, fmt.Errorf("standard: with ScopesConfig.Outer: %w", problem)
			}
		}
	}
	p := pipeline.New(stages...).With(pipeline.Options[T]{Name: cfg.Name, Clock: cfg.Clock})
	return &Pipeline[T]{Pipeline: p, Breaker: brk, Budget: funds, Estimator: reads}, nil
}

// With returns a copy of p that also uses the options set in o (see
// pipeline.Pipeline.With), sharing p's breaker, budget and estimator: for a T
// that holds resources, set Release and WhenReleased here.
func (p *Pipeline[T]) With(o pipeline.Options[T]) *Pipeline[T] {
	q := *p
	q.Pipeline = p.Pipeline.With(o)
	return &q
}

package pipelineotel

import (
	"cmp"
	"context"
	"errors"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/standard"
)

// Pipeline is a standard pipeline with telemetry: every event of its stages
// and of its breaker recorded, its breaker and budget observed, and every
// call measured by a [Calls] stage outside the preset's stages. It is a
// *standard.Pipeline[T] in every other respect (its Execute, Breaker,
// Budget, Estimator). Build one with [NewStandard] or [Instrument]; it is
// safe for concurrent use.
type Pipeline[T any] struct {
	*standard.Pipeline[T]
	t    *Telemetry
	stop func()
}

// NewStandard builds the standard pipeline of cfg (standard.New) with t
// attached, in one call: t's hook is added to cfg.Breaker.OnEvent (a hook
// already there keeps receiving the breaker's events) and set as the
// pipeline's event hook, the breaker and the budget are observed, and calls
// are measured on cfg.Clock. It returns the error standard.New returns, and
// an error naming t if t is nil.
func NewStandard[T any](t *Telemetry, cfg standard.Config) (*Pipeline[T], error) {
	if t == nil {
		return nil, errNilTelemetry
	}
	cfg.Breaker.OnEvent = pipeline.Hooks(t.Hook(), cfg.Breaker.OnEvent)
	p, err := standard.New[T](cfg)
	if err != nil {
		return nil, err
	}
	return Instrument(t, p), nil
}

// Instrument attaches t to p, a standard pipeline built elsewhere: it
// returns a copy of p whose event hook is t's (replacing any p had: add
// yours back with With), whose breaker and budget are observed, and whose
// calls are measured, on p's clock, by a Calls stage placed outside p's
// stages (pipeline.Pipeline.Within). p's breaker reports its transitions
// and refusals only if its Config.OnEvent was given t's hook when it was
// built: NewStandard does that.
func Instrument[T any](t *Telemetry, p *standard.Pipeline[T]) *Pipeline[T] {
	if t == nil {
		panic(errNilTelemetry)
	}
	if p == nil {
		panic("pipelineotel: Instrument: the pipeline is nil (did you ignore the error from standard.New?)")
	}
	q := p.With(pipeline.Options[T]{OnEvent: t.Hook(), OnAttempt: t.attempts(p.Name())})
	q.Pipeline = q.Pipeline.Within(&CallStage[T]{t: t, sets: t.calls.get(p.Name())})
	return &Pipeline[T]{Pipeline: q, t: t, stop: observePreset(t, p)}
}

// With returns a copy of p that also uses the options set in o, as
// standard.Pipeline's With does, with its telemetry: a hook in o.OnEvent is
// called after t's.
func (p *Pipeline[T]) With(o pipeline.Options[T]) *Pipeline[T] {
	mine, theirs, events := p.t.attempts(p.Name()), o.OnAttempt, o.OnEvent
	if theirs != nil || events != nil { // theirs, or else their OnEvent, receives the attempts after t
		o.OnAttempt = func(ctx context.Context, src pipeline.Source, e pipeline.AttemptFinished) {
			mine(ctx, src, e)
			if theirs != nil {
				theirs(ctx, src, e)
			} else {
				events(ctx, src, e)
			}
		}
	}
	o.OnEvent = pipeline.Hooks(p.t.Hook(), o.OnEvent)
	q := *p
	q.Pipeline = p.Pipeline.With(o)
	return &q
}

// Unobserve stops reporting p's breaker and budget in the observable gauges,
// for a pipeline that is being replaced; events and calls are still
// recorded. It is idempotent, and copies made by With share it.
func (p *Pipeline[T]) Unobserve() { p.stop() }

// Scopes is a standard.Scopes with telemetry: the events of every key's
// pipeline and breaker recorded, every key's breaker and budget observed,
// and every call measured, whether it is made through Execute or through
// the *standard.Pipeline that Get returns. Build one with [NewScopes]; it is
// safe for concurrent use.
type Scopes[K comparable, T any] struct {
	*standard.Scopes[K, T]
	stop func()
}

// DefaultFamily labels the counters and histograms of a [NewScopes] whose
// cfg.Config.Name is empty.
const DefaultFamily = "scopes"

// NewScopes builds the per-key scopes of cfg (standard.NewScopes) with t
// attached, in one call: t's [Telemetry.KeyedHook] for the family
// cfg.Config.Name (DefaultFamily if empty) is added to cfg.Options.OnEvent
// (a hook already there keeps receiving events), which receives the events
// of every key's pipeline and breaker, so that the counters and histograms
// of every key are labelled with the family and their series stay as many
// as the family's, whatever the churn of keys; every key's breaker and
// budget are observed (see [ObserveScopes]), and a [Calls] stage is placed
// outermost in every key's pipeline (before any of cfg.Outer), so that
// every call is measured on the pipeline's clock, cfg.Config.Clock, however
// it reaches the pipeline. It returns the error standard.NewScopes returns.
func NewScopes[K comparable, T any](t *Telemetry, cfg standard.ScopesConfig[K, T]) (*Scopes[K, T], error) {
	family := cmp.Or(cfg.Config.Name, DefaultFamily)
	hook := t.KeyedHook(family)
	cfg.Options.OnEvent = pipeline.Hooks(hook, cfg.Options.OnEvent) // every key's breaker's events too
	cfg.Outer = append([]pipeline.Policy[T]{&CallStage[T]{t: t, family: family}}, cfg.Outer...)
	s, err := standard.NewScopes(cfg)
	if err != nil {
		return nil, err
	}
	return &Scopes[K, T]{Scopes: s, stop: ObserveScopes(t, s)}, nil
}

// Unobserve stops reporting the scopes' breakers and budgets in the
// observable gauges; events and calls are still recorded. It is idempotent.
func (s *Scopes[K, T]) Unobserve() { s.stop() }

// errNilTelemetry is what NewStandard returns, and Instrument panics with,
// for a nil *Telemetry.
var errNilTelemetry = errors.New("pipelineotel: the *Telemetry is nil: build one with pipelineotel.New (did you ignore its error?)")

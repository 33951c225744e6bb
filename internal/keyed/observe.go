package keyed

import (
	"context"
	"iter"
	"runtime"
	"time"
	"weak"

	"github.com/jonboulle/clockwork"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/health"
	"github.com/resilience-go/pipeline/internal/clock"
	"github.com/resilience-go/pipeline/outcome"
)

// Observer is what an integration with a health.Observer in its
// configuration (nil for none) reports to: the hook of every key's
// pipelines and breakers, every call, and the integration's health source.
type Observer struct {
	obs     health.Observer
	family  string
	elapsed clock.Elapsed
}

// Observe returns what the integration named family reports to obs on c's
// clock (nil for real time), or nil if obs is nil.
func Observe(obs health.Observer, family string, c clockwork.Clock) *Observer {
	if obs == nil {
		return nil
	}
	o := &Observer{obs: obs, family: family}
	o.elapsed.Clock = c
	o.elapsed.Start()
	return o
}

// Hook is the hook of every key's pipelines and breakers: the observer's
// for the family, then onEvent, the integration's Config.OnEvent; onEvent
// alone for a nil o.
func (o *Observer) Hook(onEvent func(context.Context, pipeline.Source, pipeline.Event)) func(context.Context, pipeline.Source, pipeline.Event) {
	if o == nil {
		return onEvent
	}
	return pipeline.Hooks(o.obs.KeyedHook(o.family), onEvent)
}

// watch has the observer read the health of owner, an integration's Set,
// as source returns it, for as long as owner lives: the observation holds
// owner weakly, reports nothing once owner is unreachable, and ends when
// owner is collected, so that an integration built again and again (a
// configuration reloaded) on one observer leaves nothing behind. The
// integration holds its set alone, so the set lives as long as it does.
// Nothing for a nil o.
func watch[O any](o *Observer, owner *O, source func(*O) health.Source) {
	if o == nil {
		return
	}
	held := weak.Make(owner)
	stop := o.obs.ObserveHealth(weakSource(func(yield func(health.Dependency) bool) {
		if p := held.Value(); p != nil {
			for d := range source(p).Dependencies() {
				if !yield(d) {
					return
				}
			}
		}
	}))
	runtime.AddCleanup(owner, func(stop func()) { stop() }, stop)
}

// weakSource is a health source that reads an integration held weakly.
type weakSource iter.Seq[health.Dependency]

func (s weakSource) Dependencies() iter.Seq[health.Dependency] { return iter.Seq[health.Dependency](s) }

// Start is the reading a call started at; 0 for a nil o, which reads no
// clock.
func (o *Observer) Start() time.Duration {
	if o == nil {
		return 0
	}
	return o.elapsed.Read()
}

// Done tells the observer of a call started at start (a reading of Start)
// that returned err with the verdict v; nothing for a nil o.
func (o *Observer) Done(ctx context.Context, start time.Duration, v outcome.Verdict, err error) {
	if o != nil {
		o.obs.ObserveCall(ctx, o.family, o.elapsed.Read()-start, v, err)
	}
}

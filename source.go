package pipeline

import (
	"time"

	"github.com/resilience-go/pipeline/internal/nilness"
)

// Source says where an event came from, so that one hook shared by many
// pipelines and breakers can tell them apart: which pipeline, which kind of
// stage, and that stage's name. Every field is a string the pipeline or the
// stage fixed when it was built, so passing a Source costs no allocation.
type Source struct {
	// Pipeline is the name of the pipeline that raised the event
	// ([Options].Name), typically the dependency it calls; "" for an unnamed
	// pipeline and for the events of shared state, such as a breaker's
	// transitions, which belong to no one pipeline.
	Pipeline string
	// Stage is the kind of stage: "timeout", "retry", "breaker", "hedge", or
	// what a custom stage says in [StageInfo]. The pipeline's own events (an
	// attempt finished, work abandoned) have Stage "pipeline"; an event from a
	// stage that does not describe itself has Stage "".
	Stage string
	// Name is the stage's own name (the Name field of its configuration), ""
	// if it has none.
	Name string
}

// StageInfo is what a stage says of itself through [Described]: the pipeline
// uses it to label the stage's events and to check a composition of stages
// (see [Check]).
type StageInfo struct {
	// Kind is the kind of stage: "timeout", "retry", "breaker", "hedge", ...
	Kind string
	// Name is the stage's own name, "" if it has none.
	Name string
	// Timeout is the time a timeout stage allows what runs inside it; 0 for
	// every other kind.
	Timeout time.Duration
}

// Described is implemented by stages that say what they are. Every stage of
// this module implements it; a custom stage may, to have its events labelled
// and to take part in [Check].
type Described interface {
	Stage() StageInfo
}

// sourcePipeline is the Stage of the pipeline's own events.
const sourcePipeline = "pipeline"

// describe returns what each of policies says of itself, or a zero StageInfo
// for a policy that does not describe itself.
func describe[T any](policies []Policy[T]) []StageInfo {
	infos := make([]StageInfo, len(policies))
	for i, p := range policies {
		if d, ok := p.(Described); ok && !nilness.Of(p) {
			infos[i] = d.Stage()
		}
	}
	return infos
}

// label fills p.sources: one Source per stage, and a last one for the
// pipeline's own events. Call it whenever the stages or the name change.
func (p *Pipeline[T]) label() {
	p.sources = make([]Source, len(p.stages)+1)
	for i, info := range p.stages {
		p.sources[i] = Source{Pipeline: p.name, Stage: info.Kind, Name: info.Name}
	}
	p.sources[len(p.stages)] = Source{Pipeline: p.name, Stage: sourcePipeline}
}

// Name returns the pipeline's name ([Options].Name).
func (p *Pipeline[T]) Name() string { return p.name }

// Stages returns what each stage says of itself ([Described]), outermost
// first; a stage that does not describe itself has a zero StageInfo. The
// slice is a copy.
func (p *Pipeline[T]) Stages() []StageInfo { return append([]StageInfo(nil), p.stages...) }

// own is the Source of the pipeline's own events.
func (p *Pipeline[T]) own() Source { return p.sources[len(p.policies)] }

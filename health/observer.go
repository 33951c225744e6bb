package health

import (
	"context"
	"time"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/outcome"
)

// Observer is what an integration that keeps a pipeline per key (a
// transport per host, a gRPC client per target) reports to when its
// configuration names one: the OpenTelemetry module's *pipelineotel.Telemetry
// is one, so that one field (pipelinehttp.Config.Observer,
// pipelinegrpc.Config.Observer) puts every key's calls, events, breaker and
// budget into metrics. Its methods must be safe for concurrent use.
type Observer interface {
	// KeyedHook returns the event hook of the pipelines and breakers of
	// family, the integration's name for all its keys ("http", "grpc"):
	// each key's events reach it with the key as Source.Pipeline.
	KeyedHook(family string) func(context.Context, pipeline.Source, pipeline.Event)
	// ObserveCall is told of every call through family's pipelines, once it
	// has returned: how long it took, its verdict and its error, as the
	// pipeline's outermost stage saw them (a value judged a failure has a
	// nil error and a failing verdict).
	ObserveCall(ctx context.Context, family string, d time.Duration, v outcome.Verdict, err error)
	// ObserveHealth reads src's dependencies whenever it reports state
	// (for metrics, at each collection) until stop is called. Reading them
	// changes nothing (see Source).
	ObserveHealth(src Source) (stop func())
}

// Package keyed holds what the integrations that keep one standard pipeline
// per key (package pipelinehttp per host, the grpc module per target and
// method) share: the set of their keys' state, the configuration of one
// key, what their health.Observer is told, and errors that name the field
// they concern.
package keyed

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/health"
	"github.com/resilience-go/pipeline/internal/nilness"
	"github.com/resilience-go/pipeline/registry"
	"github.com/resilience-go/pipeline/standard"
)

// Within prefixes each error joined in err with prefix, "pipelinehttp:
// Config.Standard" say, so that every problem names the field it concerns.
func Within(prefix string, err error) error {
	each := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		each = j.Unwrap()
	}
	out := make([]error, len(each))
	for i, e := range each {
		out[i] = fmt.Errorf("%s: %w", prefix, e)
	}
	return errors.Join(out...)
}

// Config returns a key's configuration: shared named name, changed by
// override if there is one (field names it in errors, "pipelinehttp:
// Config.PerHost(https://a:443)" say), then given the integration's clock and
// marked repeatable (the integration decides per call what may be sent
// twice), and its breaker's events sent to onEvent, the integration's hook
// (beside any hook the configuration's breaker has), so that the hook
// receives every event of the key's pipelines, the breaker's transitions
// included. An override may not set its own clock, since the integration's
// is every key's; one that returns an impossible configuration is an error
// naming field.
func Config(shared standard.Config, name string, override func(standard.Config) standard.Config, field string, clock clockwork.Clock, onEvent func(context.Context, pipeline.Source, pipeline.Event)) (standard.Config, error) {
	cfg := shared
	cfg.Name = name
	if override != nil {
		cfg = override(cfg)
		var errs []error
		if cfg.Clock != nil {
			errs = append(errs, errors.New("standard: Config.Clock must be nil: the integration's Config.Clock is the clock of every key"))
		}
		if err := cfg.Validate(); err != nil {
			errs = append(errs, err)
		}
		if len(errs) > 0 {
			return cfg, Within(field, errors.Join(errs...))
		}
	}
	cfg.Clock = clock
	cfg.Hedge.Repeatable = true
	cfg.Breaker.OnEvent = pipeline.Hooks(onEvent, cfg.Breaker.OnEvent)
	return cfg, nil
}

// Settings are the settings every keyed integration's configuration has,
// for [Settings.Problems] to check under the integration's own field
// names.
type Settings struct {
	// Package prefixes each problem ("pipelinehttp"), Unit is what a key's
	// state is called ("host", "scope"), Key what its pipeline is named
	// after ("host", "key"), and MaxField names the bound on keys
	// ("MaxHosts").
	Package, Unit, Key, MaxField string

	Observer  health.Observer
	MaxKeys   int
	IdleAfter time.Duration
	Standard  standard.Config
}

// Problems returns every setting of s that cannot work, each naming its
// field and value as Config.Validate reports it, in the order of the
// fields; the checks of Standard's own fields are the integration's to add
// (keyed.Within), after its own.
func (s Settings) Problems() []error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf(s.Package+": Config."+format, args...))
	}
	if s.Observer != nil && nilness.Of(s.Observer) {
		bad("Observer is a nil %T: pass nil for none, or one that exists", s.Observer)
	}
	if s.MaxKeys < 0 {
		bad("%s must not be negative (0 means the default %d), got %d", s.MaxField, registry.DefaultMaxKeys, s.MaxKeys)
	}
	if s.IdleAfter < 0 {
		bad("IdleAfter must not be negative (0 means the default %v), got %v", registry.DefaultIdleAfter, s.IdleAfter)
	}
	if s.Standard.Name != "" {
		bad("Standard.Name must be empty: each %s's pipeline is named after its %s, got %q", s.Unit, s.Key, s.Standard.Name)
	}
	if s.Standard.Clock != nil {
		bad("Standard.Clock must be nil: set Config.Clock, the clock of every %s", s.Unit)
	}
	return errs
}

package health

import (
	"cmp"
	"encoding/json"
	"expvar"
	"iter"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/resilience-go/pipeline/budget"
	"github.com/resilience-go/pipeline/internal/nilness"
	"github.com/resilience-go/pipeline/policy/breaker"
	"github.com/resilience-go/pipeline/standard"
)

// Report is what a [Registry] reports: every dependency of every source
// registered, sorted by name.
type Report struct {
	Dependencies []Dependency `json:"dependencies"`
}

// Dependency is the state of one named dependency: its breaker and its
// budget, each nil when it has none.
type Dependency struct {
	Name    string   `json:"name"`
	Breaker *Breaker `json:"breaker,omitempty"`
	Budget  *Budget  `json:"budget,omitempty"`
	Latency *Latency `json:"latency,omitempty"`
	// Limits are the dependency's limits in use (see Limits), if any.
	Limits []Limit `json:"limits,omitempty"`

	// breaker is the breaker Breaker was read from, nil for none: kept out
	// of the report's exported fields and its JSON, so that a report gives
	// whoever reads it no hold on the breaker, and reachable by this
	// module's dashboard only, for an operator's Isolate or Reset (see
	// control.go).
	breaker *breaker.Breaker
}

// Breaker is a breaker's state, as breaker.Breaker's Snapshot and Pressure
// read it.
type Breaker struct {
	// State is "closed", "open", "half-open", "recovering" or "isolated".
	State string `json:"state"`
	// Shadow is true for a breaker in shadow mode, whose state refuses
	// nothing.
	Shadow bool `json:"shadow,omitempty"`
	// Pressure is how close the breaker is to opening on failures: 0 with
	// no failures, 1 at a trip point or when it is not closed.
	Pressure float64 `json:"pressure"`
	// NormalLatency is the dependency's measured normal latency, in seconds,
	// and NormalFailureRate its measured normal failure rate: null until the
	// breaker has measured them (or when the measurement is off).
	NormalLatency     *float64 `json:"normal_latency_seconds"`
	NormalFailureRate *float64 `json:"normal_failure_rate"`
	// Trips counts the trips since the breaker last closed.
	Trips int `json:"trips"`
	// RampFraction is the fraction of attempts a recovering breaker's ramp
	// admits, below 1 (Snapshot.RampFraction); absent in any other state.
	RampFraction float64 `json:"ramp_fraction,omitempty"`
	// BreakEnds is when the current break ends, for an open breaker.
	BreakEnds *time.Time `json:"break_ends,omitempty"`
}

// Budget is a budget's balance.
type Budget struct {
	Tokens      float64 `json:"tokens"`
	Capacity    float64 `json:"capacity"`
	Utilization float64 `json:"utilization"`
}

// Latency is what a pipeline's latency estimator measured of its recent
// attempts (the hedge reads the same): their median, 95th and 99th
// percentiles, in seconds, and how many it holds.
type Latency struct {
	Median  float64 `json:"median_seconds"`
	P95     float64 `json:"p95_seconds"`
	P99     float64 `json:"p99_seconds"`
	Samples int     `json:"samples"`
}

// Source is anything that lists dependencies: [Preset], [Scopes] and [Of]
// make one, and a type of your own may implement it. Dependencies is called
// at every report and must be safe for concurrent use.
type Source interface {
	Dependencies() iter.Seq[Dependency]
}

// sourceFunc adapts a sequence to a Source.
type sourceFunc iter.Seq[Dependency]

func (f sourceFunc) Dependencies() iter.Seq[Dependency] { return iter.Seq[Dependency](f) }

// Preset is the source of one standard pipeline: its breaker, budget and
// estimator, under the pipeline's name.
func Preset[T any](p *standard.Pipeline[T]) Source {
	return sourceFunc(func(yield func(Dependency) bool) { yield(readPipeline(p)) })
}

// Scopes is the source of every key a standard.Scopes holds when a report is
// made, each under its pipeline's name; reading them is not a use, so a key
// still goes idle and is evicted as it would.
func Scopes[K comparable, T any](s *standard.Scopes[K, T]) Source {
	return Pipelines(func(yield func(*standard.Pipeline[T]) bool) {
		s.Range(func(_ K, p *standard.Pipeline[T]) bool { return yield(p) })
	})
}

// Pipelines is the source of the standard pipelines each yields at a
// report, each under its name: what an integration that keeps a pipeline
// per host or per target (pipelinehttp.Transport.Health,
// pipelinegrpc.Client.Health) reports. each must not count as a use of
// what it reads.
func Pipelines[T any](each iter.Seq[*standard.Pipeline[T]]) Source {
	return sourceFunc(func(yield func(Dependency) bool) {
		for p := range each {
			if !yield(readPipeline(p)) {
				return
			}
		}
	})
}

// readPipeline reads a standard pipeline: Read of its breaker and budget,
// and what its estimator measured.
func readPipeline[T any](p *standard.Pipeline[T]) Dependency {
	d := read(p.Name(), p.Breaker, p.Budget)
	if est := p.Estimator; est != nil {
		now := est.Now()
		if median, n := est.Quantile(now, 0.5); n > 0 {
			p95, _ := est.Quantile(now, 0.95)
			p99, _ := est.Quantile(now, 0.99)
			d.Latency = &Latency{Median: median.Seconds(), P95: p95.Seconds(), P99: p99.Seconds(), Samples: n}
		}
	}
	return d
}

// Of is the source of one dependency named name, with its breaker and
// budget, either of which may be nil (a nil budget is unlimited and not
// reported).
func Of(name string, b *breaker.Breaker, funds *budget.Budget) Source {
	return sourceFunc(func(yield func(Dependency) bool) { yield(read(name, b, funds)) })
}

// read reads the state of a dependency named name, with its breaker and
// budget, either of which may be nil.
func read(name string, b *breaker.Breaker, funds *budget.Budget) Dependency {
	d := Dependency{Name: name, breaker: b}
	if b != nil {
		s := b.Snapshot()
		d.Breaker = &Breaker{State: s.State.String(), Shadow: s.Shadow, Pressure: b.Pressure(), Trips: s.Trips, RampFraction: s.RampFraction}
		if s.NormalLatencyOK {
			seconds := s.NormalLatency.Seconds()
			d.Breaker.NormalLatency = &seconds
		}
		if s.NormalFailureRateOK {
			rate := s.NormalFailureRate
			d.Breaker.NormalFailureRate = &rate
		}
		if s.State == breaker.Open && !s.BreakEnds.IsZero() {
			ends := s.BreakEnds
			d.Breaker.BreakEnds = &ends
		}
	}
	if funds != nil {
		d.Budget = &Budget{Tokens: funds.Tokens(), Capacity: funds.Capacity(), Utilization: funds.Utilization()}
	}
	return d
}

// Registry holds the sources a health view reports. Its zero value is an
// empty registry ready to use; it is safe for concurrent use. It is an
// http.Handler.
type Registry struct {
	mu      sync.Mutex // guards seq and sources
	seq     uint64
	sources map[uint64]Source
}

// Add registers s until remove is called; remove is idempotent. It panics,
// naming the argument, if s is nil (or a nil pointer behind the interface),
// which would otherwise panic later, in Report.
func (r *Registry) Add(s Source) (remove func()) {
	if nilness.Of(s) {
		panic("health: Registry.Add: the source is nil: pass one from health.Of, Preset, Scopes or a type with a Dependencies method")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sources == nil {
		r.sources = make(map[uint64]Source)
	}
	r.seq++
	id := r.seq
	r.sources[id] = s
	var once sync.Once
	return func() {
		once.Do(func() {
			r.mu.Lock()
			delete(r.sources, id)
			r.mu.Unlock()
		})
	}
}

// Report reads every dependency of every registered source, sorted by name
// (dependencies of one name in the order they were registered). The sources
// are read without holding the registry's lock.
func (r *Registry) Report() Report {
	r.mu.Lock()
	ids := make([]uint64, 0, len(r.sources))
	for id := range r.sources {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	sources := make([]Source, len(ids))
	for i, id := range ids {
		sources[i] = r.sources[id]
	}
	r.mu.Unlock()
	rep := Report{Dependencies: []Dependency{}}
	for _, s := range sources {
		for d := range s.Dependencies() {
			rep.Dependencies = append(rep.Dependencies, d)
		}
	}
	slices.SortStableFunc(rep.Dependencies, func(a, b Dependency) int { return cmp.Compare(a.Name, b.Name) })
	return rep
}

// ServeHTTP writes the report as JSON, with status 200 whatever the
// dependencies' states: an open breaker is the service coping with a
// dependency, not the service failing, so a probe that restarts services
// must not read it as failure. It answers GET and HEAD, and 405 to any other
// method.
func (r *Registry) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if req.Method == http.MethodHead {
		return
	}
	_ = json.NewEncoder(w).Encode(r.Report())
}

// Func returns the report as an expvar.Func, for expvar.Publish: the same
// JSON under /debug/vars, for a service without OpenTelemetry.
func (r *Registry) Func() expvar.Func {
	return func() any { return r.Report() }
}

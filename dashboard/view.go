package dashboard

import (
	"encoding/json"
	"math"
	"net/http"
	"time"

	"github.com/resilience-go/pipeline/health"
	"github.com/resilience-go/pipeline/internal/control"
)

// stateView is the dashboard's state as state.json serves it and the page
// shows it: the health view's dependencies, each with what the dashboard
// adds.
type stateView struct {
	// At is when the registry was read for this view; SampledAt when the
	// sampler last read it, which the rates and sparklines are as of.
	At              time.Time `json:"at"`
	SampledAt       time.Time `json:"sampled_at"`
	IntervalSeconds float64   `json:"interval_seconds"`
	// Actions is true when the operator actions are on.
	Actions      bool      `json:"actions"`
	Dependencies []depView `json:"dependencies"`
}

// depView is one dependency: the health view's fields (its JSON is a
// superset of health.Dependency's), with its rates and transitions.
type depView struct {
	health.Dependency
	// N tells apart dependencies of one name: the n-th of them, from 0.
	N int `json:"n,omitempty"`
	// AttemptsPerSecond and RefusalsPerSecond are as of the latest sample,
	// null when the hook (Dashboard.Observe) has seen no event of the
	// dependency.
	AttemptsPerSecond *float64     `json:"attempts_per_second"`
	RefusalsPerSecond *float64     `json:"refusals_per_second"`
	Transitions       []transition `json:"transitions"`

	state      state
	controlled bool    // its breaker is within reach of the actions
	sparks     *sparks // for the page; nil without a history
}

// view reads the registry, without any lock held, and returns its
// dependencies with what the sampler and the hook have of each; with
// history, the sparklines too.
func (d *Dashboard) view(history bool) stateView {
	rep := d.cfg.Registry.Report()
	v := stateView{
		At:              d.cfg.Clock.Now(),
		IntervalSeconds: d.cfg.Interval.Seconds(),
		Actions:         d.cfg.Authorize != nil,
		Dependencies:    make([]depView, len(rep.Dependencies)),
	}
	counts := map[string]int{}
	d.mu.Lock()
	v.SampledAt = d.sampledAt
	for i, dep := range rep.Dependencies {
		dv := depView{Dependency: dep, N: counts[dep.Name], state: stateOf(dep), controlled: control.Breaker(dep) != nil}
		counts[dep.Name]++
		if h := d.series[key{dep.Name, dv.N}]; h != nil {
			if n := len(h.ring); n > 0 {
				last := h.ring[(h.next+n-1)%n]
				dv.AttemptsPerSecond, dv.RefusalsPerSecond = finite(last.attempts), finite(last.refusals)
			}
			dv.Transitions = append([]transition(nil), h.transitions...)
			if history {
				dv.sparks = d.sparksOf(h, dep)
			}
		}
		v.Dependencies[i] = dv
	}
	d.mu.Unlock()
	for i := range v.Dependencies {
		dv := &v.Dependencies[i]
		if c := d.counters.lookup(dv.Name); c != nil && c.transitioned.Load() {
			dv.Transitions = c.latest()
		}
		if dv.Transitions == nil {
			dv.Transitions = []transition{}
		}
	}
	return v
}

// finite returns a pointer to f as a float64, nil if f is NaN.
func finite(f float32) *float64 {
	if math.IsNaN(float64(f)) {
		return nil
	}
	v := float64(f)
	return &v
}

// serveState writes the state as JSON.
func (d *Dashboard) serveState(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	if r.Method == http.MethodHead {
		return
	}
	_ = json.NewEncoder(w).Encode(d.view(false))
}

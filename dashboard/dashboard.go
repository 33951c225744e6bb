package dashboard

import (
	"net/http"
	"strings"
	"sync"
	"time"
)

// Dashboard is an http.Handler that serves the dashboard's page and its
// JSON, and samples the registry for its sparklines on a goroutine of its
// own until [Dashboard.Close]. Build it with [New]; it is safe for
// concurrent use.
type Dashboard struct {
	cfg      Config
	counters counters
	fleet    fleetCache

	// mu guards series, generation and sampledAt: the sampler's state.
	mu         sync.Mutex
	series     map[key]*series
	generation uint64
	sampledAt  time.Time

	stop      chan struct{} // closed by Close
	done      chan struct{} // closed when the sampler has returned
	closeOnce sync.Once
}

// New returns a dashboard of cfg.Registry, or the error of cfg.Validate. It
// copies cfg, takes a first sample, and starts the sampler, which runs
// until Close: call Close when the dashboard is no longer served.
func New(cfg Config) (*Dashboard, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	d := &Dashboard{
		cfg:    cfg.withDefaults(),
		series: map[key]*series{},
		stop:   make(chan struct{}),
		done:   make(chan struct{}),
	}
	d.sample(d.cfg.Clock.Now())
	go d.run()
	return d, nil
}

// Close stops the sampler and waits for it to return, and cuts short a
// refresh of the fleet view in flight. The dashboard still serves what it
// sampled until then, and the current state. Close is idempotent.
func (d *Dashboard) Close() {
	d.closeOnce.Do(func() { close(d.stop) })
	<-d.done
}

// The dashboard's endpoints, by the last element of the request's path:
// the page is at the mount point itself (a path ending in a slash).
const (
	pathPage    = ""
	pathLive    = "live" // the page's live part, which its script fetches
	pathState   = "state.json"
	pathFleet   = "fleet.json"
	pathIsolate = "isolate"
	pathReset   = "reset"
)

// ServeHTTP serves, by the last element of the request's path:
//
//   - "" (the mount point, ending in a slash): the page;
//   - state.json: the state of every dependency, the health view's JSON
//     with what the dashboard adds;
//   - fleet.json: the fleet view, when Config.Peers is set;
//   - isolate and reset: the operator actions, POST only, when
//     Config.Authorize is set.
//
// The pages answer GET and HEAD, and 405 to any other method; any other
// path is 404, and so are the actions without Config.Authorize and the
// fleet view without Config.Peers.
func (d *Dashboard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	switch last := p[strings.LastIndexByte(p, '/')+1:]; last {
	case pathIsolate, pathReset:
		if d.cfg.Authorize == nil {
			http.NotFound(w, r)
			return
		}
		d.act(w, r, last)
	case pathPage, pathLive, pathState, pathFleet:
		if last == pathFleet && d.cfg.Peers == nil {
			http.NotFound(w, r)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		switch last {
		case pathState:
			d.serveState(w, r)
		case pathFleet:
			d.serveFleet(w, r)
		default:
			d.servePage(w, r, last == pathLive)
		}
	default:
		http.Error(w, "dashboard: no such page; mount the dashboard on a pattern ending in a slash, and open that path", http.StatusNotFound)
	}
}

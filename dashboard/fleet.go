package dashboard

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"time"
	"unicode/utf8"
)

// The fleet view: the dashboard polls every peer's health view (or its
// dashboard's state.json) at most once an Interval, when its page or
// fleet.json is read, and draws one cell per peer and dependency. Each
// bound holds whatever the peers answer.
const (
	// maxPeers is the most peers polled; the rest are counted, not polled.
	maxPeers = 1000
	// maxPeerDeps is the most dependencies kept of one peer.
	maxPeerDeps = 256
	// maxCells bounds the grid: at most maxCells / peers dependencies (and
	// at most maxPeerDeps) get a row.
	maxCells = 64 << 10
	// maxName is the most bytes of a name, URL or error the view keeps.
	maxName = 200
	// maxPeerBody is the most bytes of a peer's answer read.
	maxPeerBody = 1 << 20
	// cellWidth is a cell's width in the grid, in pixels.
	cellWidth = 8
)

// fleetCache holds the latest fleet view, so that a page refreshed by many
// viewers polls the fleet once an Interval.
type fleetCache struct {
	mu       sync.Mutex    // guards view and fetching
	view     *fleetView    // the latest, nil before the first poll
	fetching chan struct{} // while a poll runs, closed when it ends; nil otherwise
}

// fleetView is the fleet as fleet.json serves it and the page draws it.
type fleetView struct {
	At    time.Time  `json:"at"`
	Peers []peerView `json:"peers"`
	// Unreachable counts the peers that gave no health view; Omitted the
	// peers beyond the most polled (maxPeers), and NamesOmitted the
	// dependencies given no row.
	Unreachable  int `json:"unreachable"`
	Omitted      int `json:"omitted"`
	NamesOmitted int `json:"names_omitted"`

	// For the page: a row per dependency, the grid's width and its cells'.
	Rows     []fleetRow `json:"-"`
	Width    int        `json:"-"`
	CellW    int        `json:"-"`
	MaxPeers int        `json:"-"`
}

// peerView is one peer: its URL, and its dependencies or why it has none.
type peerView struct {
	URL          string    `json:"url"`
	Err          string    `json:"error,omitempty"`
	Dependencies []peerDep `json:"dependencies"`
}

// peerDep is one dependency of a peer, with its breaker's state ("none"
// without a breaker).
type peerDep struct {
	Name  string `json:"name"`
	State string `json:"state"`
}

// fleetRow is one dependency across the fleet: a cell per peer, and how
// many peers have it in each state.
type fleetRow struct {
	Name   string
	Cells  []fleetCell
	Counts []stateCount
}

// fleetCell is one peer's cell in a row.
type fleetCell struct {
	X     int
	State string
	Title string
}

// stateCount is how many peers have a dependency in a state.
type stateCount struct {
	State string
	N     int
}

// The states of a cell that are not a breaker's.
const (
	cellAbsent      = "absent"
	cellUnreachable = "unreachable"
)

// fleetView returns the fleet view of at most an Interval ago, polling the
// peers if it has none: a request that finds a poll under way gets the
// previous view, or, before the first, waits for the poll (or for ctx).
func (d *Dashboard) fleetView(ctx context.Context) *fleetView {
	f := &d.fleet
	for {
		f.mu.Lock()
		if v := f.view; v != nil && d.cfg.Clock.Since(v.At) < d.cfg.Interval {
			f.mu.Unlock()
			return v
		}
		if wait := f.fetching; wait != nil {
			stale := f.view
			f.mu.Unlock()
			if stale != nil {
				return stale
			}
			select {
			case <-wait:
				continue
			case <-ctx.Done():
				return &fleetView{At: d.cfg.Clock.Now(), CellW: cellWidth, MaxPeers: maxPeers}
			}
		}
		done := make(chan struct{})
		f.fetching = done
		f.mu.Unlock()
		return d.refresh(ctx, done)
	}
}

// refresh polls the fleet, stores the view and ends the poll, even if
// Config.Peers panics.
func (d *Dashboard) refresh(ctx context.Context, done chan struct{}) (v *fleetView) {
	f := &d.fleet
	defer func() {
		f.mu.Lock()
		if v != nil {
			f.view = v
		}
		f.fetching = nil
		f.mu.Unlock()
		close(done)
	}()
	return d.poll(ctx)
}

// poll fetches every peer Config.Peers lists, at most PeerConcurrency at
// once, and all within PeerTimeout of ctx (whose cancellation it ignores:
// the poll serves every request waiting for it) or until Close.
func (d *Dashboard) poll(ctx context.Context) *fleetView {
	urls := d.cfg.Peers()
	v := &fleetView{At: d.cfg.Clock.Now(), CellW: cellWidth, MaxPeers: maxPeers}
	if len(urls) > maxPeers {
		v.Omitted, urls = len(urls)-maxPeers, urls[:maxPeers]
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), d.cfg.PeerTimeout)
	defer cancel()
	go func() { // ends with the poll, or ends it at Close
		select {
		case <-d.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	v.Peers = make([]peerView, len(urls))
	slots := make(chan struct{}, d.cfg.PeerConcurrency)
	var wg sync.WaitGroup
	for i, u := range urls {
		p := &v.Peers[i]
		p.URL = clip(u)
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			p.Err = "not polled: " + reason(ctx)
			continue
		}
		wg.Go(func() {
			defer func() { <-slots }()
			deps, err := d.fetch(ctx, u)
			if err != nil {
				p.Err = clip(err.Error())
				if ctx.Err() != nil {
					p.Err = "no answer: " + reason(ctx)
				}
				return
			}
			p.Dependencies = deps
		})
	}
	wg.Wait()
	v.aggregate()
	return v
}

// reason says why ctx, a poll's, ended.
func reason(ctx context.Context) string {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return "the poll's PeerTimeout elapsed"
	}
	return "the dashboard was closed"
}

// fetch reads one peer's dependencies from its health view.
func (d *Dashboard) fetch(ctx context.Context, url string) ([]peerDep, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	if s := req.URL.Scheme; s != "http" && s != "https" {
		return nil, fmt.Errorf("not an http or https URL")
	}
	req.Header.Set("Accept", "application/json")
	resp, err := d.cfg.Client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body := io.LimitReader(resp.Body, maxPeerBody)
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, body)
		return nil, fmt.Errorf("HTTP %s", resp.Status)
	}
	var view struct {
		Dependencies []struct {
			Name    string `json:"name"`
			Breaker *struct {
				State string `json:"state"`
			} `json:"breaker"`
		} `json:"dependencies"`
	}
	if err := json.NewDecoder(body).Decode(&view); err != nil {
		return nil, fmt.Errorf("not a health view (or over %d bytes): %v", maxPeerBody, err)
	}
	_, _ = io.Copy(io.Discard, body) // so that the connection is reused
	deps := make([]peerDep, 0, min(len(view.Dependencies), maxPeerDeps))
	for _, dep := range view.Dependencies[:min(len(view.Dependencies), maxPeerDeps)] {
		st := none
		if dep.Breaker != nil {
			st = parseState(dep.Breaker.State)
		}
		deps = append(deps, peerDep{Name: clip(dep.Name), State: st.String()})
	}
	return deps, nil
}

// aggregate draws the grid of v's peers: a row per dependency, by name.
func (v *fleetView) aggregate() {
	var names []string
	seen := map[string]bool{}
	byPeer := make([]map[string]string, len(v.Peers)) // each peer's states by name, the first of a name
	for i, p := range v.Peers {
		if p.Err != "" {
			v.Unreachable++
		}
		byPeer[i] = make(map[string]string, len(p.Dependencies))
		for _, dep := range p.Dependencies {
			if _, dup := byPeer[i][dep.Name]; !dup {
				byPeer[i][dep.Name] = dep.State
			}
			if !seen[dep.Name] {
				seen[dep.Name] = true
				names = append(names, dep.Name)
			}
		}
	}
	slices.Sort(names)
	if most := max(1, min(maxPeerDeps, maxCells/max(len(v.Peers), 1))); len(names) > most {
		v.NamesOmitted, names = len(names)-most, names[:most]
	}
	v.Width = len(v.Peers) * v.CellW
	order := []string{closed.String(), recovering.String(), halfOpen.String(), open.String(), isolated.String(),
		none.String(), unknown.String(), cellAbsent, cellUnreachable}
	for _, name := range names {
		row := fleetRow{Name: name, Cells: make([]fleetCell, len(v.Peers))}
		counts := map[string]int{}
		for i, p := range v.Peers {
			st, ok := byPeer[i][name]
			switch {
			case p.Err != "":
				st = cellUnreachable
			case !ok:
				st = cellAbsent
			}
			counts[st]++
			row.Cells[i] = fleetCell{X: i * v.CellW, State: st, Title: p.URL + ": " + st}
		}
		for _, st := range order {
			if counts[st] > 0 {
				row.Counts = append(row.Counts, stateCount{st, counts[st]})
			}
		}
		v.Rows = append(v.Rows, row)
	}
}

// clip cuts s to at most maxName bytes, on a rune boundary, marking the cut.
func clip(s string) string {
	if len(s) <= maxName {
		return s
	}
	cut := maxName
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// serveFleet writes the fleet view as JSON.
func (d *Dashboard) serveFleet(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	if r.Method == http.MethodHead {
		return
	}
	_ = json.NewEncoder(w).Encode(d.fleetView(r.Context()))
}

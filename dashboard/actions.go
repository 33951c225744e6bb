package dashboard

import (
	"fmt"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/resilience-go/pipeline/internal/control"
	"github.com/resilience-go/pipeline/policy/breaker"
)

// The operator actions: isolate a dependency's breaker (breaker.Isolate:
// refuse every attempt until a reset) and reset it (breaker.Reset: close
// it, and forget its trips). They exist only with Config.Authorize. Each is
// a POST of a form with the dependency's name (dependency) and, for one of
// several of that name, its number (n), as the page's buttons send it; it
// answers 303, back to the page. Every action is logged, done or refused.

// maxForm bounds an action's form.
const maxForm = 64 << 10

// crossOrigin refuses a browser's request sent from another site: one whose
// Sec-Fetch-Site, or else whose Origin, says so. A request from a program
// (neither header) passes, and is left to Config.Authorize.
var crossOrigin = http.NewCrossOriginProtection()

// act does the action named action ("isolate" or "reset") of r.
func (d *Dashboard) act(w http.ResponseWriter, r *http.Request, action string) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	log := d.cfg.Logger.With(slog.String("action", action), slog.String("remote", r.RemoteAddr))
	if err := crossOrigin.Check(r); err != nil {
		log.LogAttrs(r.Context(), slog.LevelWarn, "dashboard: action refused: cross-origin request", slog.String("error", err.Error()))
		http.Error(w, "dashboard: cross-origin request refused", http.StatusForbidden)
		return
	}
	if err := d.cfg.Authorize(r); err != nil {
		log.LogAttrs(r.Context(), slog.LevelWarn, "dashboard: action refused: not authorized", slog.String("error", err.Error()))
		http.Error(w, "dashboard: not authorized", http.StatusForbidden)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	if err := r.ParseForm(); err != nil {
		http.Error(w, "dashboard: "+err.Error(), http.StatusBadRequest)
		return
	}
	name := r.PostForm.Get("dependency")
	n := 0
	if s := r.PostForm.Get("n"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil || n < 0 {
			http.Error(w, fmt.Sprintf("dashboard: n must be a number from 0, got %q", s), http.StatusBadRequest)
			return
		}
	}
	log = log.With(slog.String("dependency", name), slog.Int("n", n))
	b := d.breakerOf(name, n)
	if b == nil {
		log.LogAttrs(r.Context(), slog.LevelWarn, "dashboard: action refused: no such breaker")
		http.Error(w, fmt.Sprintf("dashboard: no breaker of a dependency %q (number %d of that name)", name, n), http.StatusNotFound)
		return
	}
	from := b.State()
	switch action {
	case pathIsolate:
		b.Isolate()
	case pathReset:
		b.Reset()
	}
	log.LogAttrs(r.Context(), slog.LevelInfo, "dashboard: action done",
		slog.String("from", from.String()), slog.String("to", b.State().String()))
	// Back to the page, by a path relative to the action's, which the
	// browser resolves: the handler's own path may have lost a prefix.
	w.Header().Set("Location", "./")
	w.WriteHeader(http.StatusSeeOther)
}

// breakerOf returns the breaker of the n-th dependency named name in a
// report of the registry read now, nil if it has none.
func (d *Dashboard) breakerOf(name string, n int) *breaker.Breaker {
	for _, dep := range d.cfg.Registry.Report().Dependencies {
		if dep.Name != name {
			continue
		}
		if n == 0 {
			return control.Breaker(dep)
		}
		n--
	}
	return nil
}

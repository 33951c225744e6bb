package dashboard

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"html/template"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/resilience-go/pipeline/health"
)

// The page: one self-contained HTML document, its style and script inline,
// nothing fetched from elsewhere (its Content-Security-Policy says so to the
// browser). The server renders the whole table, so the page reads without
// JavaScript; the script only fetches the page's live part again every
// Interval and puts it in place.

//go:embed page.html
var pageHTML string

// script is the page's one script: it refreshes the live part. It is
// constant, so that the Content-Security-Policy can name it by its hash.
const script = `(function () {
  var live = document.getElementById("live");
  var status = document.getElementById("status");
  var every = Number(live.getAttribute("data-interval")) || 1000;
  function tick() {
    fetch("live", {cache: "no-store", credentials: "same-origin"})
      .then(function (r) { if (!r.ok) { throw new Error("HTTP " + r.status); } return r.text(); })
      .then(function (html) { live.innerHTML = html; status.textContent = "live, every " + every / 1000 + " s"; status.className = "ok"; })
      .catch(function (e) { status.textContent = "not updating (" + e.message + "): retrying"; status.className = "stale"; })
      .finally(function () { setTimeout(tick, every); });
  }
  status.textContent = "live, every " + every / 1000 + " s";
  setTimeout(tick, every);
})();`

// policy is the page's Content-Security-Policy: its own inline style, its
// one script by hash, fetches and forms to itself only, and no framing (so
// that no other site can put the action buttons under a user's pointer).
var policy = func() string {
	sum := sha256.Sum256([]byte(script))
	return "default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-" +
		base64.StdEncoding.EncodeToString(sum[:]) +
		"'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
}()

// pageTemplate renders the page ("page") and its live part ("live").
var pageTemplate = template.Must(template.New("page").Funcs(template.FuncMap{
	"rate":    rate,
	"seconds": seconds,
	"percent": percent,
	"clock":   clockText,
	"tokens":  tokens,
	"used":    used,
	"sparkOf": sparkOf,
}).Parse(pageHTML))

// pageView is what the page shows.
type pageView struct {
	stateView
	Fleet      *fleetView
	IntervalMS int64
	Script     template.JS
	SparkW     int
	SparkH     int
}

// servePage writes the page, or with live its live part only.
func (d *Dashboard) servePage(w http.ResponseWriter, r *http.Request, live bool) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", policy)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if r.Method == http.MethodHead {
		return
	}
	v := pageView{
		stateView:  d.view(true),
		IntervalMS: d.cfg.Interval.Milliseconds(),
		Script:     template.JS(script),
		SparkW:     sparkWidth,
		SparkH:     sparkHeight,
	}
	if d.cfg.Peers != nil {
		v.Fleet = d.fleetView(r.Context())
	}
	name := "page"
	if live {
		name = "live"
	}
	var b bytes.Buffer
	if err := pageTemplate.ExecuteTemplate(&b, name, v); err != nil {
		http.Error(w, "dashboard: "+err.Error(), http.StatusInternalServerError)
		return
	}
	_, _ = w.Write(b.Bytes())
}

// sparkArgs are what the "spark" template draws: a sparkline, its CSS
// class and its size.
type sparkArgs struct {
	spark
	Class string
	W, H  int
}

// sparkOf returns the arguments of the "spark" template.
func sparkOf(s spark, class string) sparkArgs {
	return sparkArgs{spark: s, Class: class, W: sparkWidth, H: sparkHeight}
}

// State returns the state of the dependency's breaker, "none" without one.
func (d depView) State() string { return d.state.String() }

// Refusing reports whether the dependency's breaker refuses attempts now.
func (d depView) Refusing() bool { return d.state.refusing() }

// Controlled reports whether the actions can reach the dependency's
// breaker: one a Source of the user's own reports cannot be.
func (d depView) Controlled() bool { return d.controlled }

// Sparks returns the dependency's sparklines, nil without a history.
func (d depView) Sparks() *sparks { return d.sparks }

// Latest returns its latest transitions, the newest first, at most three.
func (d depView) Latest() []transition {
	n := min(len(d.Transitions), 3)
	out := make([]transition, n)
	for i := range n {
		out[i] = d.Transitions[len(d.Transitions)-1-i]
	}
	return out
}

// rate formats a rate per second, "–" when not known.
func rate(r *float64) string {
	if r == nil {
		return "–"
	}
	return strconv.FormatFloat(*r, 'f', 1, 64)
}

// seconds formats a latency given in seconds.
func seconds(s float64) string {
	d := time.Duration(s * float64(time.Second))
	switch {
	case d < time.Millisecond:
		return strconv.FormatFloat(s*1e6, 'f', 0, 64) + " µs"
	case d < time.Second:
		return strconv.FormatFloat(s*1e3, 'f', 1, 64) + " ms"
	}
	return strconv.FormatFloat(s, 'f', 2, 64) + " s"
}

// percent formats a fraction as a percentage.
func percent(f float64) string { return strconv.FormatFloat(math.Round(f*100), 'f', 0, 64) + "%" }

// clockText formats a time of day, in UTC, to the second.
func clockText(t time.Time) string {
	if t.IsZero() {
		return "–"
	}
	return t.UTC().Format("15:04:05")
}

// used formats a limit's use: "3 / 8", with the calls queued if any.
func used(l health.Limit) string {
	tenth := func(f float64) string { return strconv.FormatFloat(math.Round(f*10)/10, 'f', -1, 64) }
	s := tenth(l.InUse) + " / " + tenth(l.Limit)
	if l.Queued > 0 {
		s += ", " + strconv.Itoa(l.Queued) + " queued"
	}
	return s
}

// tokens formats a budget's balance.
func tokens(b *health.Budget) string {
	return strconv.FormatFloat(b.Tokens, 'f', 1, 64) + " / " + strconv.FormatFloat(b.Capacity, 'f', 0, 64)
}

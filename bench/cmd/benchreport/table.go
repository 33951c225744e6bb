package main

import (
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// ours is the library name of our rows; every other name in a group is a peer.
const ours = "ours"

// floorOf names, for each composition, the floor its ours/floor ratio is taken
// against: the primitive that dominates what the composition must do.
var floorOf = map[string]string{
	"Empty":             "Floor/call",
	"Breaker":           "Floor/now",
	"BreakerParallel":   "Floor/now",
	"RetryBreaker":      "Floor/now",
	"Card":              "Floor/withtimeout",
	"CardGuarded":       "Floor/withtimeout",
	"CardHedged":        "Floor/withtimeout",
	"CardHedgedGuarded": "Floor/withtimeout",
	"Refusal":           "Floor/now",
	"Preset":            "Floor/withtimeout",

	// The limits (issue #15).
	"RateLimit":             "Floor/now",
	"RateLimitParallel":     "Floor/now",
	"RateLimitRefused":      "Floor/now",
	"Bulkhead":              "Floor/mutex",
	"BulkheadParallel":      "Floor/mutex",
	"AdaptiveLimit":         "Floor/now",
	"AdaptiveLimitParallel": "Floor/now",
}

// target is what one of our rows must reach (SPEC section 9 and the issues
// since).
type target struct {
	peer string // the peer of the same group the time ratio is taken against
	// against, if set, replaces peer: full row names whose times are summed,
	// less those of less, for a target set by other rows (a floor plus another
	// composition).
	against, less []string
	maxRatio      float64 // ours/peer ns/op must be at most this
	// allocs bounds allocs/op: none if allocs < 0; at most allocs if
	// allocsFloor is empty; at most allocsFloor's allocs/op plus allocs if not.
	allocs      int
	allocsFloor string
}

// targets are keyed by group (composition/path). Success-path targets are the
// specification's; on the failing path only the time ratio is targeted, since a
// failed call must allocate the error that reports it.
var targets = map[string]target{
	"Breaker/ok":         {peer: "gobreaker", maxRatio: 1, allocs: 0},
	"BreakerParallel/ok": {peer: "gobreaker", maxRatio: 1, allocs: -1},
	"RetryBreaker/ok":    {peer: "failsafe", maxRatio: 0.25, allocs: 0},
	"RetryBreaker/fail":  {peer: "failsafe", maxRatio: 0.25, allocs: -1},
	// 0.25× failsafe-go would be below context.WithTimeout's own cost, so the
	// default card's target is its floor: the timeout's context plus the rest.
	"Card/ok":   {against: []string{"Floor/withtimeout", "RetryBreaker/ok/ours"}, maxRatio: 1.3, allocs: 2, allocsFloor: "Floor/withtimeout"},
	"Card/fail": {peer: "failsafe", maxRatio: 0.25, allocs: -1},
	// The guard's floor is not one goroutine hand-off but what a guard must do:
	// hand the work over and wait for it or for the timeout's context.
	"CardGuarded/ok":  {against: []string{"Card/ok/ours", "Floor/guard"}, less: []string{"Floor/withtimeout"}, maxRatio: 1, allocs: -1},
	"CardHedged/ok":   {peer: "failsafe", maxRatio: 0.25, allocs: 2, allocsFloor: "Floor/withtimeout"},
	"CardHedged/fail": {peer: "failsafe", maxRatio: 0.25, allocs: -1},
	"Refusal/open":    {against: []string{"RetryBreaker/ok/ours"}, maxRatio: 0.5, allocs: 0},
	// The preset is the hand-built card; 5% is the noise between two runs of
	// one pipeline on this machine.
	"Preset/ok":  {peer: "handbuilt", maxRatio: 1.05, allocs: 0, allocsFloor: "Preset/ok/handbuilt"},
	"Scopes/get": {peer: "syncmap", maxRatio: 1, allocs: 0},
	// The limits (issue #15): a rate-limit stage no slower than
	// x/time/rate's Allow made a stage; a contended bulkhead no slower than a
	// buffered-channel semaphore; every success path and refusal without
	// allocation.
	"RateLimit/ok":             {peer: "xstage", maxRatio: 1, allocs: 0},
	"RateLimitParallel/ok":     {peer: "xstage", maxRatio: 1, allocs: 0},
	"RateLimitRefused/refused": {peer: "xrate", maxRatio: 1, allocs: 0},
	"Bulkhead/ok":              {peer: "failsafe", maxRatio: 1, allocs: 0},
	"BulkheadParallel/ok":      {peer: "chan", maxRatio: 1, allocs: 0},
	"AdaptiveLimit/ok":         {peer: "failsafe", maxRatio: 1, allocs: 0},
	"AdaptiveLimitParallel/ok": {peer: "failsafe", maxRatio: 1, allocs: 0},
}

// reference names the rows whose summed time t's ratio is taken against, for
// a row of group.
func (t target) reference(group string) []string {
	if len(t.against) > 0 {
		return t.against
	}
	return []string{group + "/" + t.peer}
}

func (t target) String(rs *results) string {
	what := t.peer
	if len(t.against) > 0 {
		what = strings.Join(t.against, " + ")
		for _, name := range t.less {
			what += " − " + name
		}
	}
	s := fmt.Sprintf("≤ %s× %s", trim(t.maxRatio), what)
	switch {
	case t.allocs < 0:
	case t.allocsFloor == "":
		s += fmt.Sprintf(", ≤ %d allocs", t.allocs)
	default:
		limit := "?"
		if f, ok := rs.get(t.allocsFloor); ok {
			limit = trim(f.allocs.center + float64(t.allocs))
		}
		s += fmt.Sprintf(", ≤ %s allocs (%s + %d)", limit, strings.TrimPrefix(t.allocsFloor, "Floor/"), t.allocs)
	}
	return s
}

// verdict says whether r meets t: "yes", "no (...)" naming what is missed, or
// "?" when a row it needs is missing.
func (t target) verdict(rs *results, r *row) string {
	var missed []string
	ref := 0.0
	for _, name := range t.reference(r.group()) {
		p, ok := rs.get(name)
		if !ok {
			return "? (no " + name + " row)"
		}
		ref += p.ns.center
	}
	for _, name := range t.less {
		p, ok := rs.get(name)
		if !ok {
			return "? (no " + name + " row)"
		}
		ref -= p.ns.center
	}
	if ratio := r.ns.center / ref; ratio > t.maxRatio {
		m := fmt.Sprintf("time %s×", fmtRatio(ratio))
		comp, _, _ := strings.Cut(r.name, "/")
		if f, ok := rs.get(floorOf[comp]); ok && t.maxRatio*ref < f.ns.center {
			m += fmt.Sprintf(" (the target, %s ns, is below the %s floor)", fmtNs(t.maxRatio*ref), strings.TrimPrefix(f.name, "Floor/"))
		}
		missed = append(missed, m)
	}
	if t.allocs >= 0 {
		limit := float64(t.allocs)
		if t.allocsFloor != "" {
			f, ok := rs.get(t.allocsFloor)
			if !ok {
				return "? (no " + t.allocsFloor + " row)"
			}
			limit += f.allocs.center
		}
		if r.allocs.center > limit {
			missed = append(missed, fmt.Sprintf("%s allocs", trim(r.allocs.center)))
		}
	}
	if len(missed) == 0 {
		return "yes"
	}
	return "**no**: " + strings.Join(missed, ", ")
}

// writeTable prints the side-by-side table: the floors, then every composition
// with ours first, ratios for our rows, and targets.
func writeTable(w io.Writer, rs *results) {
	fmt.Fprintln(w, "| benchmark | ns/op | ± | B/op | allocs/op | ours / peer | ours / floor | target | met |")
	fmt.Fprintln(w, "|---|--:|--:|--:|--:|---|---|---|---|")
	seen := map[string]bool{}
	for _, name := range rs.order {
		r := rs.rows[name]
		g := r.group()
		if !seen[g] {
			seen[g] = true
			if _, ok := rs.get(g + "/" + ours); !ok {
				if t, ok := targets[g]; ok {
					fmt.Fprintf(w, "| %s/%s | missing | | | | | | %s | missing |\n", g, ours, t.String(rs))
				}
			}
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s |", name, fmtNs(r.ns.center), fmtPct(r.ns.spread()),
			trim(r.bytes.center), trim(r.allocs.center))
		if r.lib() != ours {
			fmt.Fprintln(w, " | | | |")
			continue
		}
		fmt.Fprintf(w, " %s | %s |", peerRatios(rs, r), floorRatio(rs, r))
		if t, ok := targets[g]; ok {
			fmt.Fprintf(w, " %s | %s |\n", t.String(rs), t.verdict(rs, r))
		} else {
			fmt.Fprintln(w, " — | |")
		}
	}
}

// peerRatios is ours/peer ns/op for every peer in r's group.
func peerRatios(rs *results, r *row) string {
	var out []string
	for _, name := range rs.order {
		p := rs.rows[name]
		if p.group() == r.group() && p.lib() != ours {
			out = append(out, fmt.Sprintf("%s× %s", fmtRatio(r.ns.center/p.ns.center), p.lib()))
		}
	}
	return strings.Join(out, ", ")
}

// floorRatio is ours/floor ns/op against the floor of r's composition.
func floorRatio(rs *results, r *row) string {
	comp, _, _ := strings.Cut(r.name, "/")
	f, ok := rs.get(floorOf[comp])
	if !ok {
		return ""
	}
	return fmt.Sprintf("%s× %s", fmtRatio(r.ns.center/f.ns.center), strings.TrimPrefix(f.name, "Floor/"))
}

var stagesRE = regexp.MustCompile(`^Execute/stages=(\d+)$`)

// writeCore prints the root package's own benchmarks and the per-stage slope of
// Execute, fitted by least squares over the stages=N rows.
func writeCore(w io.Writer, rs *results) {
	fmt.Fprintln(w, "| benchmark | ns/op | ± | B/op | allocs/op |")
	fmt.Fprintln(w, "|---|--:|--:|--:|--:|")
	var xs, ys []float64
	for _, name := range rs.order {
		r := rs.rows[name]
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", name, fmtNs(r.ns.center), fmtPct(r.ns.spread()),
			trim(r.bytes.center), trim(r.allocs.center))
		if m := stagesRE.FindStringSubmatch(name); m != nil {
			n, _ := strconv.Atoi(m[1])
			xs, ys = append(xs, float64(n)), append(ys, r.ns.center)
		}
	}
	fmt.Fprintln(w)
	if slope, icept, ok := fit(xs, ys); ok {
		fmt.Fprintf(w, "Per-stage slope of Execute: %.2f ns per stage (least squares over %d sizes; intercept %.1f ns).\n",
			slope, len(xs), icept)
	}
	if d, ok := rs.get("Direct"); ok {
		if e, ok := rs.get("Execute/stages=0"); ok {
			fmt.Fprintf(w, "Execute with no stages costs %.1f ns more than calling the work directly.\n", e.ns.center-d.ns.center)
		}
	}
}

// fit is the least-squares line through (xs, ys); ok is false with fewer than
// two distinct xs.
func fit(xs, ys []float64) (slope, intercept float64, ok bool) {
	n := float64(len(xs))
	var sx, sy, sxx, sxy float64
	for i := range xs {
		sx, sy = sx+xs[i], sy+ys[i]
		sxx, sxy = sxx+xs[i]*xs[i], sxy+xs[i]*ys[i]
	}
	d := n*sxx - sx*sx
	if len(xs) < 2 || d == 0 {
		return 0, 0, false
	}
	slope = (n*sxy - sx*sy) / d
	return slope, (sy - slope*sx) / n, true
}

func fmtNs(v float64) string {
	switch {
	case v < 10:
		return strconv.FormatFloat(v, 'f', 2, 64)
	case v < 100:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}

func fmtRatio(v float64) string {
	if v < 10 {
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}

func fmtPct(v float64) string { return fmt.Sprintf("%.0f%%", v*100) }

// trim formats v with no trailing zeros.
func trim(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

package fleet

import (
	"time"

	"github.com/resilience-go/pipeline/fleet/internal/hashtag"
	"github.com/resilience-go/pipeline/fleet/internal/quorum"
)

// The states a process reports (see package quorum, which decides them). A
// report is one of them and the time it was written, in Unix milliseconds
// of its process's clock: the process's score in that state's sorted set
// (see summaryScript).
const (
	reportOpen      = quorum.Open
	reportClosed    = quorum.Closed
	reportFollowing = quorum.Following
)

// view is one breaker's fleet as read from Redis.
type view struct {
	seen, open, need int
	isolated         bool // the fleet-wide isolation switch is set
}

// quorum reports whether enough processes report the dependency open.
func (v view) quorum() bool { return quorum.Reached(v.open, v.need) }

// viewOf is the view of a breaker's summary: every report counted is seen,
// the open ones are open, and the quorum is s.need of those seen.
func (s *settings) viewOf(c counts) view {
	return view{seen: c.seen, open: c.open, need: s.need(c.seen), isolated: c.isolated}
}

// window is what a summary read at a given time counts and forgets, in Unix
// milliseconds: the reports written at or after from, at most ttl old (or
// from the future, a peer's clock ahead of ours), count, as quorum.Tally
// counts them; those written before forget, more than 10 × ttl old, are
// dead, and deleted by the next publication that prunes.
type window struct {
	from, forget int64
}

func (s *settings) window(now time.Time) window {
	return window{from: ceilMilli(now.Add(-s.ttl)), forget: ceilMilli(now.Add(-s.forget()))}
}

// ceilMilli is t in Unix milliseconds, rounded up: a report written at ms
// milliseconds is at or after t exactly when ms >= ceilMilli(t).
func ceilMilli(t time.Time) int64 {
	ms := t.UnixMilli() // rounded down, before the epoch too
	if t.After(time.UnixMilli(ms)) {
		ms++
	}
	return ms
}

// keys are the keys of one breaker. They share the hash tag of
// hashtag.Of(namespace, name), so Redis Cluster keeps them in one slot.
type keys struct {
	// sorted sets of processes, each scored by the time of its latest report
	seen      string // every process
	open      string // those whose latest report is open
	following string // those whose latest report is following
	control   string // string: "isolate" while the fleet-wide isolation is set
}

func keysOf(namespace, name string) keys {
	tag := "pipeline:fleet:" + hashtag.Of(namespace, name) + ":"
	return keys{seen: tag + "seen", open: tag + "open", following: tag + "following", control: tag + "control"}
}

// marker is the member of a breaker's open set, scored +inf, while its
// isolation is set: Isolate adds it beside the control key, Reset removes it,
// and every run of summaryScript puts it right by the control key, the
// truth. It lets the quiet round (see queued) see isolation and open reports
// in one ZCOUNT; every count of open reports leaves it out ("(+inf"). No
// process id is empty, so no report is the marker.
const marker = ""

// isolateValue is the value of the control key while isolation is set.
const isolateValue = "isolate"

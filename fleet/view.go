package fleet

import (
	"strconv"
	"time"

	"github.com/resilience-go/pipeline/fleet/internal/quorum"
)

// A report is what one process says of one breaker: its state, as one
// letter, and when it said it, in Unix milliseconds of its clock. It is
// stored as the field of the process in the breaker's hash, "o:1764586800000".
type report struct {
	state byte
	at    time.Time
}

// The states a process reports (see package quorum, which decides them).
const (
	reportOpen      = quorum.Open
	reportClosed    = quorum.Closed
	reportFollowing = quorum.Following
)

func (r report) encode() string {
	return string(r.state) + ":" + strconv.FormatInt(r.at.UnixMilli(), 10)
}

func decode(s string) (report, bool) {
	if len(s) < 3 || s[1] != ':' {
		return report{}, false
	}
	switch s[0] {
	case reportOpen, reportClosed, reportFollowing:
	default:
		return report{}, false
	}
	ms, err := strconv.ParseInt(s[2:], 10, 64)
	if err != nil {
		return report{}, false
	}
	return report{state: s[0], at: time.UnixMilli(ms)}, true
}

// view is one breaker's fleet as read from Redis.
type view struct {
	seen, open, need int
	isolated         bool     // the fleet-wide isolation switch is set
	expired          []string // processes whose reports are long dead
}

// quorum reports whether enough processes report the dependency open.
func (v view) quorum() bool { return quorum.Reached(v.open, v.need) }

// count reads the fields of a breaker's hash at now: a report counts when it
// is at most ttl old (or from the future, a peer's clock ahead of ours).
// Reports older than forget are listed in expired, for deletion.
func (s *settings) count(fields map[string]string, now time.Time) view {
	var v view
	var t quorum.Tally
	forget := 10 * s.ttl
	for process, value := range fields {
		r, ok := decode(value)
		if age := now.Sub(r.at); !ok || age > forget {
			v.expired = append(v.expired, process)
		} else {
			t.Add(r.state, age, s.ttl)
		}
	}
	v.seen, v.open, v.need = t.Seen, t.Open, s.need(t.Seen)
	return v
}

// keys are the two keys of one breaker. They share the hash tag of
// hashTag(namespace, name), so Redis Cluster keeps them in one slot.
type keys struct {
	states  string // hash: process -> report
	control string // string: "isolate" while the fleet-wide isolation is set
}

func keysOf(namespace, name string) keys {
	tag := "pipeline:fleet:" + hashTag(namespace, name) + ":"
	return keys{states: tag + "states", control: tag + "control"}
}

// hashTag is the hash tag of name in namespace, {len(namespace):namespace:name}:
// the namespace's length in bytes first, so that no two pairs of names share
// a tag, though either may contain ':' (neither may contain a brace). Joined
// with ':' alone, breaker "b:c" of fleet "svc" and breaker "c" of fleet
// "svc:b" shared their keys, and one fleet's Isolate reached the other's
// breaker.
func hashTag(namespace, name string) string {
	return "{" + strconv.Itoa(len(namespace)) + ":" + namespace + ":" + name + "}"
}

// isolateValue is the value of the control key while isolation is set.
const isolateValue = "isolate"

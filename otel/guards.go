package pipelineotel

import (
	"go.opentelemetry.io/otel/attribute"

	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/adaptive"
	"github.com/resilience-go/pipeline/policy/fallback"
	"github.com/resilience-go/pipeline/policy/fault"
)

// The stages added after the standard preset's report what they decided in
// events of their own: a rate limiter, a bulkhead and an adaptive limit the
// calls they let in after a wait (their refusals are pipeline.Stopped, like
// every stop), an adaptive limit its revisions, a fallback the results it
// replaced, a ceiling the attempts it cut, a fault stage the faults it
// injected. This file holds the attribute values and sets of those events;
// the hook records them with the others (telemetry.go), and limits.go
// observes the limiters' state.

// whys is every finding of an adaptive revision, indexed by adaptive.Why,
// then unknown for a finding added later.
var whys = [...]string{
	adaptive.Held:          "held",
	adaptive.Grew:          "grew",
	adaptive.Queued:        "queued",
	adaptive.Slower:        "slower",
	adaptive.Throttled:     "throttled",
	adaptive.Throttled + 1: reasonUnknown,
}

// whyIndex is the slot of finding w: w itself, or the last (unknown) for a
// finding this package does not know.
func whyIndex(w adaptive.Why) int { return min(int(w), len(whys)-1) }

// faultKinds is every kind of injected fault, indexed by fault.Kind; 0, and
// a kind added later, is unknown.
var faultKinds = [...]string{
	0:               reasonUnknown,
	fault.Latency:   "latency",
	fault.Transient: "transient",
	fault.Throttled: "throttled",
	fault.Permanent: "permanent",
	fault.Value:     "value",
}

// faultIndex is the slot of kind k.
func faultIndex(k fault.Kind) int {
	if int(k) >= len(faultKinds) {
		return 0
	}
	return int(k)
}

// fallbackIndex is the outcome (see outcomeIndex) of the result a fallback
// replaced: its stop's reason, error for any other failure, a value judged
// a failure included, and ok for a success the stage's When chose.
func fallbackIndex(e fallback.Executed) int {
	i := outcomeIndex(e.Err)
	if i == outcomeOKIndex && e.Verdict.Kind != outcome.OK {
		i = outcomeErrorIndex
	}
	return i
}

// fallback is the set of a fallback that replaced a result of outcome i
// (fallbackIndex), and failed if failed.
func (s *sourceSets) fallback(i int, failed bool) *opts {
	j := 0
	if failed {
		j = 1
	}
	return s.fallbacks[i][j].get(func() *opts {
		kvs := []attribute.KeyValue{AttrFallbackReason.String(outcomeName(i))}
		if failed {
			kvs = append(kvs, AttrFallbackFailed.Bool(true))
		}
		return s.base(kvs...)
	})
}

// fault is the set of a fault of kind k.
func (s *sourceSets) fault(k fault.Kind) *opts {
	i := faultIndex(k)
	return s.faults[i].get(func() *opts { return s.base(AttrFaultKind.String(faultKinds[i])) })
}

// revision is the set of a revision that found w. It carries the limiter's
// kind and name and not the pipeline's: a limiter is shared by the
// pipelines of one dependency, and whichever call happened to end its
// interval says nothing of where the revision belongs.
func (s *sourceSets) revision(w adaptive.Why) *opts {
	i := whyIndex(w)
	return s.revisions[i].get(func() *opts {
		return newOpts(AttrStageKind.String(s.src.Stage), AttrStageName.String(s.src.Name), AttrAdaptiveWhy.String(whys[i]))
	})
}

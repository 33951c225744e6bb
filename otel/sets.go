package pipelineotel

import (
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/breaker"
)

// Recording a measurement with a precomputed attribute set allocates nothing
// only if the options slice is precomputed too: a variadic argument built at
// the call of an interface method escapes. So every set is kept as the two
// slices the instruments take, built once per source and value the first
// time an event needs them.

// opts is one attribute set, as the options of a counter and a histogram.
type opts struct {
	add []metric.AddOption
	rec []metric.RecordOption
}

func newOpts(kvs ...attribute.KeyValue) *opts {
	o := metric.WithAttributeSet(attribute.NewSet(kvs...))
	return &opts{add: []metric.AddOption{o}, rec: []metric.RecordOption{o}}
}

// slot is one lazily built attribute set. Two goroutines may build it at
// once; both results are equal, and one is kept.
type slot struct{ p atomic.Pointer[opts] }

func (s *slot) get(build func() *opts) *opts {
	if o := s.p.Load(); o != nil {
		return o
	}
	o := build()
	if s.p.CompareAndSwap(nil, o) {
		return o
	}
	return s.p.Load()
}

// maxEntries bounds a cache: past it the cache starts again empty, so that
// pipelines named after keys that come and go (per-key scopes evict theirs)
// cannot grow it without bound. A Scopes holds at most MaxKeys (1024 by
// default) keys of about six sources each.
const maxEntries = 8192

// cache maps a key to its attribute sets. Reads of a key promoted to read
// take no lock; new keys go to dirty, under mu, and dirty replaces read once
// it has been missed in read as many times as it holds keys, so that copying
// the keys costs a constant per key added (the design of sync.Map, whose
// interface keys would box a Source on every read).
type cache[K comparable, V any] struct {
	read   atomic.Pointer[map[K]*V]
	mu     sync.Mutex
	dirty  map[K]*V // guarded by mu; nil or every key of read and the newer ones
	misses int      // guarded by mu: reads that read could not answer
	build  func(K) *V
}

// get returns k's sets, building them on k's first use.
func (c *cache[K, V]) get(k K) *V {
	read := c.read.Load()
	if read != nil {
		if v, ok := (*read)[k]; ok {
			return v
		}
	}
	return c.slow(k)
}

// slow is get for a key not in read.
func (c *cache[K, V]) slow(k K) *V {
	c.mu.Lock()
	defer c.mu.Unlock()
	read := c.read.Load()
	if read != nil {
		if v, ok := (*read)[k]; ok {
			return v
		}
	}
	v, ok := c.dirty[k]
	if !ok {
		held := len(c.dirty)
		if c.dirty == nil && read != nil {
			held = len(*read)
		}
		switch {
		case held >= maxEntries: // full: start again
			c.read.Store(nil)
			c.dirty = make(map[K]*V)
		case c.dirty == nil:
			c.dirty = make(map[K]*V)
			if read != nil {
				for key, sets := range *read {
					c.dirty[key] = sets
				}
			}
		}
		v = c.build(k)
		c.dirty[k] = v
	}
	if c.misses++; c.misses >= len(c.dirty) {
		m := c.dirty
		c.read.Store(&m)
		c.dirty, c.misses = nil, 0
	}
	return v
}

// sourceSets are the attribute sets of the events of one source.
type sourceSets struct {
	src      pipeline.Source
	stops    [maxReasons]slot
	retries  [len(verdicts)]slot
	skips    [len(skips)]slot
	own      slot // the source alone: hedges sent, timeouts, abandoned work, waits
	rejected [len(states)][2]slot
	// Of the newer stages (see guards.go): a fallback's by what it replaced
	// and whether it failed, a fault's by kind, an adaptive revision's by
	// finding.
	fallbacks [maxReasons + 2][2]slot
	faults    [len(faultKinds)]slot
	revisions [len(whys)]slot
}

func newSourceSets(src pipeline.Source) *sourceSets { return &sourceSets{src: src} }

// base is the source's labels: pipeline, stage kind and stage name.
func (s *sourceSets) base(extra ...attribute.KeyValue) *opts {
	return newOpts(append([]attribute.KeyValue{
		AttrPipeline.String(s.src.Pipeline),
		AttrStageKind.String(s.src.Stage),
		AttrStageName.String(s.src.Name),
	}, extra...)...)
}

// stop is the set of a stop for reason r.
func (s *sourceSets) stop(r pipeline.Reason) *opts {
	i := reasonIndex(r)
	return s.stops[i].get(func() *opts { return s.base(AttrStopReason.String(reasonName(i))) })
}

// retry is the set of a retry after an attempt of verdict k.
func (s *sourceSets) retry(k outcome.Kind) *opts {
	i := verdictIndex(k)
	return s.retries[i].get(func() *opts { return s.base(AttrVerdict.String(verdicts[i])) })
}

// skip is the set of a hedge skipped for why.
func (s *sourceSets) skip(why string) *opts {
	i := skipIndex(why)
	return s.skips[i].get(func() *opts { return s.base(AttrHedgeSkipReason.String(skips[i])) })
}

// stage is the set of the source's labels alone.
func (s *sourceSets) stage() *opts { return s.own.get(func() *opts { return s.base() }) }

// refusal is the set of a refusal by the breaker s is the source of, in state.
func (s *sourceSets) refusal(state breaker.State, shadow bool) *opts {
	i := min(int(state), len(states)-1)
	j := 0
	if shadow {
		j = 1
	}
	return s.rejected[i][j].get(func() *opts {
		return newOpts(breakerLabels(s.src.Name, stateName(state), shadow)...)
	})
}

// breakerLabels are a breaker's name and state, and the shadow mark when set.
func breakerLabels(name, state string, shadow bool, extra ...attribute.KeyValue) []attribute.KeyValue {
	kvs := append([]attribute.KeyValue{AttrBreaker.String(name), AttrBreakerState.String(state)}, extra...)
	if shadow {
		kvs = append(kvs, AttrBreakerShadow.Bool(true))
	}
	return kvs
}

// transitionSet is the set of a transition: the breaker, the state it went
// to and the cause. Transitions are rare, so it is built for each.
func transitionSet(src pipeline.Source, t breaker.Transition) attribute.Set {
	return attribute.NewSet(breakerLabels(src.Name, stateName(t.To), t.Shadow, AttrBreakerCause.String(causeName(t.Cause)))...)
}

// callSets are the attribute sets of what is labelled with a pipeline's name
// alone: its calls, by outcome (the stop reasons at their own index, then ok
// and error), its attempts, by verdict, and its hedges won. An attempt's
// event comes from the pipeline's own source, so looking its sets up by the
// pipeline's name hashes one string where the source has three.
type callSets struct {
	name     string
	outcomes [maxReasons + 2]slot
	attempts [len(verdicts) + 1]slot // the last: canceledVerdict
	won      slot
}

// The outcomes of a call that did not stop, after the reasons.
const (
	outcomeOKIndex    = maxReasons
	outcomeErrorIndex = maxReasons + 1
)

func newCallSets(name string) *callSets { return &callSets{name: name} }

// outcome is the set of a call that ended as outcomes[i].
func (c *callSets) outcome(i int) *opts {
	return c.outcomes[i].get(func() *opts {
		return newOpts(AttrPipeline.String(c.name), AttrOutcome.String(outcomeName(i)))
	})
}

// outcomeName is the attribute value of outcome i: a stop's reason, ok or
// error.
func outcomeName(i int) string {
	switch {
	case i < maxReasons:
		return reasonName(i)
	case i == outcomeErrorIndex:
		return outcomeError
	}
	return outcomeOK
}

// attempt is the set of an attempt of verdict v: pipeline and verdict.
func (c *callSets) attempt(v outcome.Verdict) *opts {
	i := attemptIndex(v)
	return c.attempts[i].get(func() *opts {
		name := canceledVerdict
		if i < len(verdicts) {
			name = verdicts[i]
		}
		return newOpts(AttrPipeline.String(c.name), AttrVerdict.String(name))
	})
}

// win is the set of a hedge that won.
func (c *callSets) win() *opts {
	return c.won.get(func() *opts { return newOpts(AttrPipeline.String(c.name)) })
}

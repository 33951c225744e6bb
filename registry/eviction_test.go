package registry_test

import (
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline/latency"
	"github.com/resilience-go/pipeline/registry"
)

// TestEvictionSteps walks the eviction rule of the Registry doc, one Get or
// clock advance per step, with MaxKeys 3 and IdleAfter 1 min.
func TestEvictionSteps(t *testing.T) {
	f := newFixture(t, 3, time.Minute)
	for i, step := range []struct {
		advance time.Duration
		get     string
		built   int      // which lifetime of the key Get returns
		evicted []string // the keys this step evicts, in order
		held    []string // the keys held after the step, newest first (Range)
	}{
		{get: "a", built: 1, held: []string{"a"}},
		{get: "b", built: 1, held: []string{"b", "a"}},
		{get: "c", built: 1, held: []string{"c", "b", "a"}},
		{get: "a", built: 1, held: []string{"c", "b", "a"}}, // a held: its flag is set, nothing moves
		// Full: a, the oldest, was used (second chance, moves to the new end); b was not: evicted.
		{get: "d", built: 1, evicted: []string{"b"}, held: []string{"d", "a", "c"}},
		{get: "c", built: 1, held: []string{"d", "a", "c"}},
		// A minute later, c was used (seen now), a and d were not: both idle. Not full after that.
		{advance: time.Minute, get: "e", built: 1, evicted: []string{"a", "d"}, held: []string{"e", "c"}},
		{get: "b", built: 2, held: []string{"b", "e", "c"}}, // b's second lifetime
		// Full, nothing used since it was seen: the oldest goes, though it is not idle.
		{advance: time.Second, get: "a", built: 2, evicted: []string{"c"}, held: []string{"a", "b", "e"}},
		// Every key used: each gets its second chance, then the oldest goes anyway.
		{get: "a", built: 2, held: []string{"a", "b", "e"}},
		{get: "b", built: 2, held: []string{"a", "b", "e"}},
		{get: "e", built: 1, held: []string{"a", "b", "e"}},
		{get: "f", built: 1, evicted: []string{"e"}, held: []string{"f", "a", "b"}},
	} {
		f.clock.Advance(step.advance)
		v, err := f.reg.Get(step.get)
		require.NoError(t, err, "step %d", i)
		assert.Equal(t, counter{step.get, step.built}, *v, "step %d", i)
		assert.Equal(t, step.evicted, f.takeEvicted(), "step %d: evicted", i)
		var held []string
		for k := range f.reg.Range {
			held = append(held, k)
		}
		assert.Equal(t, step.held, held, "step %d: held", i)
		assert.Equal(t, len(step.held), f.reg.Len(), "step %d", i)
	}
}

// TestEvictedValueKeepsWorking: a caller holds the latency estimator of host
// "a" while other hosts evict it (MaxKeys 1). The caller's estimator keeps
// recording and answering for the work in progress, the eviction was reported,
// and the next Get of "a" builds a fresh, empty estimator.
func TestEvictedValueKeepsWorking(t *testing.T) {
	const ms = time.Millisecond
	clock := clockwork.NewFakeClock()
	var mu sync.Mutex
	var evicted []string
	reg, err := registry.New(registry.Config[string, *latency.Estimator]{
		New: func(string) (*latency.Estimator, error) {
			return latency.New(latency.Config{Clock: clock})
		},
		MaxKeys: 1,
		OnEvict: func(host string, _ *latency.Estimator) {
			mu.Lock()
			defer mu.Unlock()
			evicted = append(evicted, host)
		},
		Clock: clock,
	})
	require.NoError(t, err)

	est, err := reg.Get("a")
	require.NoError(t, err)
	halfway := make(chan struct{})
	resume := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { // the caller's work on host a: ten attempts of 1..10 ms
		for i := 1; i <= 10; i++ {
			est.Record(est.Now(), time.Duration(i)*ms)
			if i == 5 {
				close(halfway)
				<-resume
			}
		}
	})
	<-halfway
	for _, host := range []string{"b", "c"} { // evict a, then b, while the work is halfway
		_, err := reg.Get(host)
		require.NoError(t, err)
	}
	close(resume)
	wg.Wait()

	mu.Lock()
	assert.Equal(t, []string{"a", "b"}, evicted)
	mu.Unlock()
	p50, n := est.Quantile(est.Now(), 0.5)
	assert.Equal(t, 10, n, "every attempt recorded in the evicted estimator")
	assert.InDelta(t, float64(5*ms), float64(p50), float64(ms), "p50 of 1..10 ms")

	fresh, err := reg.Get("a")
	require.NoError(t, err)
	assert.NotSame(t, est, fresh)
	_, n = fresh.Quantile(fresh.Now(), 0.5)
	assert.Zero(t, n, "the next Get built a new estimator")
}

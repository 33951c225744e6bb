package registry_test

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline/registry"
)

// counter is a value of the tests: the key and how many times New built it.
type counter struct {
	key   string
	built int
}

// fixture is a Registry[string, *counter] on a fake clock that records its
// New and OnEvict calls.
type fixture struct {
	reg     *registry.Registry[string, *counter]
	clock   *clockwork.FakeClock
	mu      sync.Mutex
	news    map[string]int
	evicted []string
}

func newFixture(t *testing.T, maxKeys int, idle time.Duration) *fixture {
	t.Helper()
	f := &fixture{clock: clockwork.NewFakeClock(), news: map[string]int{}}
	reg, err := registry.New(registry.Config[string, *counter]{
		New: func(key string) (*counter, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.news[key]++
			return &counter{key: key, built: f.news[key]}, nil
		},
		MaxKeys:   maxKeys,
		IdleAfter: idle,
		OnEvict: func(key string, v *counter) {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.evicted = append(f.evicted, key)
		},
		Clock: f.clock,
	})
	require.NoError(t, err)
	f.reg = reg
	return f
}

// takeEvicted returns the keys evicted since the last call.
func (f *fixture) takeEvicted() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	e := f.evicted
	f.evicted = nil
	return e
}

func TestGetReturnsTheSameValueUntilEvicted(t *testing.T) {
	f := newFixture(t, 1, 0)
	a1, err := f.reg.Get("a")
	require.NoError(t, err)
	a2, err := f.reg.Get("a")
	require.NoError(t, err)
	assert.Same(t, a1, a2)
	_, err = f.reg.Get("b") // evicts a
	require.NoError(t, err)
	a3, err := f.reg.Get("a")
	require.NoError(t, err)
	assert.NotSame(t, a1, a3)
	assert.Equal(t, map[string]int{"a": 2, "b": 1}, f.news)
	assert.Equal(t, []string{"a", "b"}, f.takeEvicted())
}

func TestRangeStopsAndIsNotAUse(t *testing.T) {
	f := newFixture(t, 3, time.Minute)
	for _, k := range []string{"a", "b", "c"} {
		_, err := f.reg.Get(k)
		require.NoError(t, err)
	}
	var visited []string
	f.reg.Range(func(k string, _ *counter) bool {
		visited = append(visited, k)
		return len(visited) < 2
	})
	assert.Equal(t, []string{"c", "b"}, visited, "newest first, stopped by f")
	f.clock.Advance(time.Minute)
	for range f.reg.Range {
	}
	_, err := f.reg.Get("d")
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b", "c"}, f.takeEvicted(), "all idle: Range did not count as use")
}

func TestGetOfAHeldKeyAllocatesNothing(t *testing.T) {
	f := newFixture(t, 0, 0)
	_, err := f.reg.Get("host-1")
	require.NoError(t, err)
	key := "host-1"
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _, _ = f.reg.Get(key) }))
}

// countingClock counts the readings of a fake clock.
type countingClock struct {
	*clockwork.FakeClock
	reads atomic.Int64
}

func (c *countingClock) Now() time.Time {
	c.reads.Add(1)
	return c.FakeClock.Now()
}

func TestGetOfAHeldKeyReadsNoClock(t *testing.T) {
	clock := &countingClock{FakeClock: clockwork.NewFakeClock()}
	reg, err := registry.New(registry.Config[string, int]{New: func(string) (int, error) { return 1, nil }, Clock: clock})
	require.NoError(t, err)
	_, err = reg.Get("a")
	require.NoError(t, err)
	assert.Equal(t, int64(1), clock.reads.Load(), "one reading per insertion")
	for range 100 {
		_, _ = reg.Get("a")
	}
	assert.Equal(t, int64(1), clock.reads.Load(), "none per Get of a held key")
}

func TestZeroRegistryPanics(t *testing.T) {
	var reg registry.Registry[string, int]
	const msg = "registry: Registry used without registry.New (its zero value is not usable)"
	assert.PanicsWithValue(t, msg, func() { _, _ = reg.Get("a") })
	assert.PanicsWithValue(t, msg, func() { reg.Len() })
	assert.PanicsWithValue(t, msg, func() { reg.Range(func(string, int) bool { return true }) })
}

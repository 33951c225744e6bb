package latency

import (
	"testing"
	"time"
	"unsafe"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline/internal/histogram"
	"github.com/resilience-go/pipeline/internal/testcheck"
)

func newFakeEstimator(t *testing.T, cfg Config) (*Estimator, *clockwork.FakeClock) {
	t.Helper()
	clock := clockwork.NewFakeClock()
	cfg.Clock = clock
	e, err := New(cfg)
	require.NoError(t, err)
	return e, clock
}

func TestEstimatorNowFollowsItsClock(t *testing.T) {
	e, clock := newFakeEstimator(t, Config{})
	assert.Equal(t, time.Duration(0), e.Now())
	clock.Advance(1500 * time.Millisecond)
	assert.Equal(t, 1500*time.Millisecond, e.Now())
}

func TestEstimatorNowRealTime(t *testing.T) {
	e, err := New(Config{})
	require.NoError(t, err)
	a := e.Now()
	b := e.Now()
	assert.GreaterOrEqual(t, a, time.Duration(0))
	assert.GreaterOrEqual(t, b, a, "monotonic")
}

// TestEstimatorStepsAndDecay drives the default estimator on a fake clock: the
// p95 of what it saw, and nothing once a whole window has gone by in silence.
func TestEstimatorStepsAndDecay(t *testing.T) {
	e, clock := newFakeEstimator(t, Config{})
	for i := 1; i <= 100; i++ {
		e.Record(e.Now(), time.Duration(i)*ms)
		clock.Advance(100 * ms) // 10 s of traffic
	}
	d, n := e.Quantile(e.Now(), 0.95)
	assert.Equal(t, 100, n)
	assert.Equal(t, histogram.Bucket(95*ms), histogram.Bucket(d))

	clock.Advance(17 * time.Second) // t = 27 s: the first slice [0, 3s) is still held
	_, n = e.Quantile(e.Now(), 0.95)
	assert.Equal(t, 100, n)
	clock.Advance(3 * time.Second) // t = 30 s: it expires
	_, n = e.Quantile(e.Now(), 0.95)
	assert.Equal(t, 70, n, "samples recorded at 3 s .. 9.9 s remain")

	clock.Advance(DefaultWindow) // idle for a window
	d, n = e.Quantile(e.Now(), 0.95)
	assert.Equal(t, 0, n)
	assert.Equal(t, time.Duration(0), d, "none, not the stale p95")
}

// TestEstimatorLateReading checks that a reading taken before another caller's
// later one counts at the later time (readings race between goroutines).
func TestEstimatorLateReading(t *testing.T) {
	e, clock := newFakeEstimator(t, Config{Window: 10 * time.Second})
	early := e.Now()
	clock.Advance(5 * time.Second)
	e.Record(e.Now(), ms)
	e.Record(early, 2*ms)
	clock.Advance(9 * time.Second) // t = 14 s: slice [5s, 6s) is still held
	_, n := e.Quantile(e.Now(), 0.5)
	assert.Equal(t, 2, n, "the early reading counted at 5 s, not at 0 s (gone at 10 s)")
	clock.Advance(time.Second)
	_, n = e.Quantile(e.Now(), 0.5)
	assert.Equal(t, 0, n)
}

// ms is a millisecond, for short tables.
const ms = time.Millisecond

// estimatorBytes is the memory of a default Estimator, as docs/latency.md states
// it: the struct and its ring of slices, on a 64-bit platform.
const estimatorBytes = 4632

func TestEstimatorSize(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("sizes are documented for 64-bit platforms")
	}
	e, err := New(Config{})
	require.NoError(t, err)
	size := int(unsafe.Sizeof(*e)-unsafe.Sizeof(e.w)) + e.w.Bytes()
	t.Logf("Estimator %d bytes, its window's %d", size, e.w.Bytes())
	assert.Equal(t, estimatorBytes, size)
}

// zeroPanic is what every method of an Estimator not built by New panics with.
const zeroPanic = "latency: Estimator used without latency.New (its zero value is not usable)"

// TestZeroEstimatorPanicsNamingNew: an Estimator declared instead of built by
// New fails at first use, whatever the first use is, with a panic naming New,
// rather than reading a saturated clock or dividing by a zero slice width while
// holding its lock.
func TestZeroEstimatorPanicsNamingNew(t *testing.T) {
	for name, use := range map[string]func(e *Estimator){
		"Now":      func(e *Estimator) { e.Now() },
		"Record":   func(e *Estimator) { e.Record(0, time.Millisecond) },
		"Quantile": func(e *Estimator) { e.Quantile(0, 0.95) },
		"Window":   func(e *Estimator) { e.Window() },
	} {
		var zero Estimator
		assert.PanicsWithValue(t, zeroPanic, func() { use(&zero) }, name)
		assert.True(t, zero.mu.TryLock(), "%s: the panic left the lock held", name)
		assert.PanicsWithValue(t, zeroPanic, func() { use(new(Estimator)) }, name)
	}
}

// TestZeroEstimatorPanicLeavesNothingLocked: the panic comes before the lock is
// taken, so a caller that recovers it leaves the estimator as it found it, and a
// use from another goroutine fails the same way at once instead of blocking
// forever behind a lock the panic left held.
func TestZeroEstimatorPanicLeavesNothingLocked(t *testing.T) {
	e := new(Estimator)
	assert.PanicsWithValue(t, zeroPanic, func() { e.Record(0, time.Millisecond) })
	assert.Equal(t, zeroPanic, testcheck.PanicElsewhere(t, func() { e.Quantile(0, 0.95) }))
	assert.Equal(t, zeroPanic, testcheck.PanicElsewhere(t, func() { e.Record(0, time.Millisecond) }))
}

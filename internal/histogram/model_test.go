package histogram

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// sample is one sample of the reference model, with the slice it was counted in.
type sample struct {
	slice int64
	d     time.Duration
}

// windowModel is the reference for a Window: a plain list of samples, each
// tagged with the index floor(t/width) of the slice it was added in, where t is
// the latest now seen. The window holds the samples whose slice is one of the
// last `slices` up to the latest now. It also replays the memo rule, so that
// every read is predicted exactly.
type windowModel struct {
	width   time.Duration
	slices  int64
	began   bool
	latest  time.Duration
	samples []sample

	memoOK bool
	memoQ  float64
	memoD  time.Duration
	adds   int
}

func floorDiv(a, b time.Duration) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return int64(q)
}

// observe moves the model to now, clamped to the latest now seen, and reports
// whether the current slice changed (the implementation's rotation).
func (m *windowModel) observe(now time.Duration) {
	if !m.began {
		m.began, m.latest, m.memoOK = true, now, false
		return
	}
	if now <= m.latest {
		return
	}
	if floorDiv(now, m.width) != floorDiv(m.latest, m.width) {
		m.memoOK = false
	}
	m.latest = now
}

// held returns the durations of the samples the window holds, sorted.
func (m *windowModel) held() []time.Duration {
	head := floorDiv(m.latest, m.width)
	var ds []time.Duration
	for _, s := range m.samples {
		if s.slice > head-m.slices {
			ds = append(ds, s.d)
		}
	}
	slices.Sort(ds)
	return ds
}

type windowMachine struct {
	w   *Window
	m   windowModel
	now time.Duration // the test's clock, which the calls may lag behind
}

func newWindowMachine(t *rapid.T) *windowMachine {
	width := time.Duration(rapid.Int64Range(1, 1000).Draw(t, "width"))
	n := rapid.IntRange(1, 12).Draw(t, "slices")
	// A span that is not a multiple of slices rounds the width down.
	extra := time.Duration(rapid.Int64Range(0, int64(n)-1).Draw(t, "extra"))
	w, err := New(width*time.Duration(n)+extra, n)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return &windowMachine{
		w:   w,
		m:   windowModel{width: width, slices: int64(n)},
		now: time.Duration(rapid.Int64Range(-5000, 5000).Draw(t, "epoch")),
	}
}

// when draws the now passed to a call: usually the clock, sometimes a little
// earlier (a caller whose reading was overtaken by another's).
func (s *windowMachine) when(t *rapid.T) time.Duration {
	return s.now - time.Duration(rapid.OneOf(rapid.Just(int64(0)), rapid.Int64Range(0, 2000)).Draw(t, "lag"))
}

var durations = rapid.OneOf(
	rapid.Int64Range(-100, 5000), // around the underflow bucket
	rapid.Int64Range(1e6, 2e6),   // a narrow band: many samples per bucket
	rapid.Int64Range(0, 1<<37),   // the whole range and beyond
	rapid.SampledFrom([]int64{1024, 1217, 1218, 1 << 36, math.MaxInt64}),
)

func (s *windowMachine) Add(t *rapid.T) {
	now := s.when(t)
	k := rapid.OneOf(rapid.Just(1), rapid.IntRange(1, 80)).Draw(t, "count")
	for range k {
		d := time.Duration(durations.Draw(t, "d"))
		s.w.Add(now, d)
		s.m.observe(now)
		s.m.samples = append(s.m.samples, sample{floorDiv(s.m.latest, s.m.width), d})
		s.m.adds++
	}
}

func (s *windowMachine) Advance(t *rapid.T) {
	span := s.m.width * time.Duration(s.m.slices)
	s.now += time.Duration(rapid.OneOf(
		rapid.Int64Range(0, int64(s.m.width)),
		rapid.Int64Range(0, int64(span)),
		rapid.Int64Range(int64(span), 100*int64(span)),
	).Draw(t, "advance"))
}

func (s *windowMachine) Quantile(t *rapid.T) {
	now := s.when(t)
	q := rapid.OneOf(
		rapid.SampledFrom([]float64{0, 0.5, 0.95, 0.99, 1}),
		rapid.Float64Range(-0.5, 1.5),
		rapid.Just(math.NaN()),
	).Draw(t, "q")
	d, n := s.w.Quantile(now, q)
	s.m.observe(now)
	held := s.m.held()
	require.Equal(t, len(held), n, "sample count")
	if n == 0 {
		assert.Equal(t, time.Duration(0), d, "no samples reads 0")
		return
	}
	cq := q
	if !(cq >= 0) {
		cq = 0
	} else if cq > 1 {
		cq = 1
	}
	r := int(rank(cq, n))
	if !s.m.memoOK || cq != s.m.memoQ || s.m.adds > n/32 {
		// A recompute: in the bucket of the exact order statistic. (Where it
		// lies in the bucket depends on the bucket's mean, which an expired
		// slice leaves approximate: TestSteadyLatencyReadsExactly and the
		// accuracy tables check the placement.)
		assert.Equal(t, bucketOf(held[r-1]), bucketOf(d), "q=%v rank %d of %d: exact %v, got %v", cq, r, n, held[r-1], d)
		s.m.memoOK, s.m.memoQ, s.m.memoD, s.m.adds = true, cq, d, 0
		return
	}
	// A memoized read: the last result, and within the documented bound: its
	// rank among the current samples is off by at most samples/32.
	assert.Equal(t, s.m.memoD, d, "memoized quantile q=%v", cq)
	k := n / 32
	loB := bucketOf(held[max(r-k, 1)-1])
	hiB := bucketOf(held[min(r+k, n)-1])
	assert.True(t, loB <= bucketOf(d) && bucketOf(d) <= hiB,
		"memoized q=%v of %d samples: bucket %d outside [%d, %d] (ranks %d +- %d)", cq, n, bucketOf(d), loB, hiB, r, k)
}

func TestWindowMatchesModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := newWindowMachine(t)
		t.Repeat(map[string]func(*rapid.T){
			"add":      s.Add,
			"advance":  s.Advance,
			"quantile": s.Quantile,
			"": func(t *rapid.T) {
				var sum int
				for _, c := range s.w.total {
					sum += int(c)
				}
				require.Equal(t, s.w.n, sum, "the total histogram sums to the count")
			},
		})
	})
}

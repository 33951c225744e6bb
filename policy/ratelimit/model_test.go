package ratelimit

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/resilience-go/pipeline/criticality"
	"pgregory.net/rapid"
)

// model is the reference bucket: its credit, in nanoseconds of earning, is
// at most Burst intervals and below 0 while tokens are promised ahead of
// time. A call takes one interval of credit.
type model struct {
	interval, capacity int64
	credit             int64
}

// bucketMachine drives a Limiter and the model with random clock advances,
// calls that take a token or refuse, calls that may wait, and waits given up.
type bucketMachine struct {
	l     *Limiter
	clock *clockwork.FakeClock
	m     model
	now   int64 // nanoseconds since the limiter was built
	// admitted holds when each admitted call got its token (now, or the end
	// of its wait), in nanoseconds; a given-up wait's token is removed.
	admitted []int64
	// latest is the reservation that may still be given back: the last one
	// made, if no call has taken or been promised a token since.
	latest *reservation
	at     int64 // the token time of latest
}

// rates divide a second exactly, so that the model's interval is the
// limiter's.
var rates = []float64{1, 2, 4, 5, 8, 10, 20, 25, 50, 100, 1000, 1e6}

func newBucketMachine(t *rapid.T) *bucketMachine {
	clock := clockwork.NewFakeClock()
	cfg := Config{
		Rate:  rapid.SampledFrom(rates).Draw(t, "rate"),
		Burst: rapid.IntRange(1, 20).Draw(t, "burst"),
		Clock: clock,
	}
	l, err := New(cfg)
	if err != nil {
		t.Fatalf("New(%+v): %v", cfg, err)
	}
	interval := int64(time.Second) / int64(cfg.Rate)
	if l.interval != interval {
		t.Fatalf("interval %d, want %d", l.interval, interval)
	}
	capacity := int64(cfg.Burst) * interval
	return &bucketMachine{l: l, clock: clock, m: model{interval: interval, capacity: capacity, credit: capacity}}
}

func (s *bucketMachine) Advance(t *rapid.T) {
	d := rapid.OneOf(
		rapid.Int64Range(0, s.m.interval),
		rapid.Int64Range(0, 5*s.m.capacity),
		rapid.Int64Range(0, 1000),
	).Draw(t, "advance")
	s.clock.Advance(time.Duration(d))
	s.now += d
	s.m.credit = min(s.m.credit+d, s.m.capacity)
}

// Allow takes a token or is refused with the time until one.
func (s *bucketMachine) Allow(t *rapid.T) {
	wait, ok := s.l.Allow()
	if want := s.m.credit >= s.m.interval; ok != want {
		t.Fatalf("Allow = %v with a credit of %d ns and an interval of %d ns", ok, s.m.credit, s.m.interval)
	}
	if !ok {
		if want := time.Duration(s.m.interval - s.m.credit); wait != want {
			t.Fatalf("refused with the hint %v, want %v (the time until the next token)", wait, want)
		}
		return
	}
	s.m.credit -= s.m.interval
	s.admitted = append(s.admitted, s.now)
	s.latest = nil
}

// Reserve asks for a token that may come within a limit.
func (s *bucketMachine) Reserve(t *rapid.T) {
	limit := time.Duration(rapid.Int64Range(0, 3*s.m.interval).Draw(t, "limit"))
	wait, r, ok := s.l.reserve(limit, criticality.Default)
	want := time.Duration(max(s.m.interval-s.m.credit, 0))
	if wait != want {
		t.Fatalf("reserve(%v) waits %v, want %v", limit, wait, want)
	}
	if ok != (want <= limit) {
		t.Fatalf("reserve(%v) = %v with a wait of %v", limit, ok, want)
	}
	if !ok {
		return
	}
	s.m.credit -= s.m.interval
	s.admitted = append(s.admitted, s.now+int64(wait))
	if wait > 0 {
		s.latest, s.at = &r, s.now+int64(wait)
	} else {
		s.latest = nil
	}
}

// GiveUp gives back the latest reservation, if its wait has not ended.
func (s *bucketMachine) GiveUp(t *rapid.T) {
	if s.latest == nil || s.at <= s.now {
		t.Skip("no wait to give up")
	}
	s.l.cancel(*s.latest)
	s.m.credit += s.m.interval
	i := slices.Index(s.admitted, s.at)
	s.admitted = slices.Delete(s.admitted, i, i+1)
	s.latest = nil
}

// Check holds the limiter to the model and to the bound: within any stretch
// of time d, at most d/interval + Burst tokens (interval <= 1/Rate).
func (s *bucketMachine) Check(t *rapid.T) {
	if got, want := s.l.Tokens(), float64(s.m.credit)/float64(s.m.interval); math.Abs(got-want) > 1e-9*float64(s.l.burst) {
		t.Fatalf("Tokens = %v, want %v", got, want)
	}
	times := slices.Sorted(slices.Values(s.admitted))
	burst := int64(s.l.burst)
	for i := range times {
		// The densest stretch starting at times[i] that holds burst+k tokens
		// must last at least k intervals.
		for j := i + int(burst); j < len(times); j++ {
			if k := int64(j-i+1) - burst; times[j]-times[i] < k*s.m.interval {
				t.Fatalf("%d tokens within %v: more than %v/interval + Burst %d", j-i+1,
					time.Duration(times[j]-times[i]), time.Duration(times[j]-times[i]), burst)
			}
		}
	}
}

func TestBucketMatchesModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		t.Repeat(rapid.StateMachineActions(newBucketMachine(t)))
	})
}

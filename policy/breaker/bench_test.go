package breaker_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/breaker"
)

var errDown = errors.New("down")

func newDefault(b *testing.B) *breaker.Breaker {
	b.Helper()
	br, err := breaker.New(breaker.Config{})
	if err != nil {
		b.Fatal(err)
	}
	return br
}

func succeed(context.Context) (int, error) { return 1, nil }

// BenchmarkGuard is the guarded stage on the success path, default settings.
func BenchmarkGuard(b *testing.B) {
	p := pipeline.New(breaker.Guard[int](newDefault(b)))
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Execute(ctx, succeed); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGuardParallel(b *testing.B) {
	p := pipeline.New(breaker.Guard[int](newDefault(b)))
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := p.Execute(ctx, succeed); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkAdmitDone is the two-step API, measuring the duration on the
// breaker's clock.
func BenchmarkAdmitDone(b *testing.B) {
	br := newDefault(b)
	b.ReportAllocs()
	for b.Loop() {
		t, err := br.Admit()
		if err != nil {
			b.Fatal(err)
		}
		br.Done(t, outcome.Verdict{})
	}
}

func BenchmarkAdmitDoneParallel(b *testing.B) {
	br := newDefault(b)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			t, err := br.Admit()
			if err != nil {
				b.Error(err)
				return
			}
			br.Done(t, outcome.Verdict{})
		}
	})
}

// BenchmarkAdmitRecord is the two-step API with the caller's own duration.
func BenchmarkAdmitRecord(b *testing.B) {
	br := newDefault(b)
	b.ReportAllocs()
	for b.Loop() {
		t, err := br.Admit()
		if err != nil {
			b.Fatal(err)
		}
		br.Record(t, outcome.Verdict{}, time.Millisecond)
	}
}

// BenchmarkRefusal is an open breaker refusing through the stage.
func BenchmarkRefusal(b *testing.B) {
	br := newDefault(b)
	br.Isolate()
	p := pipeline.New(breaker.Guard[int](br))
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Execute(ctx, succeed); err == nil {
			b.Fatal("admitted")
		}
	}
}

// BenchmarkNormals is the two-step API on the success path with each measured
// normal on or off, to price them: "defaults" keeps both (and so a trip window),
// "neither" keeps no window at all, as the defaults did before the measured
// normals.
func BenchmarkNormals(b *testing.B) {
	off := struct {
		slow  breaker.SlowCalls
		fails breaker.Failures
	}{breaker.SlowCalls{Disabled: true}, breaker.Failures{Disabled: true}}
	for _, v := range []struct {
		name string
		cfg  breaker.Config
	}{
		{"defaults", breaker.Config{}},
		{"no-SlowCalls", breaker.Config{SlowCalls: off.slow}},
		{"no-Failures", breaker.Config{Failures: off.fails}},
		{"neither", breaker.Config{SlowCalls: off.slow, Failures: off.fails}},
	} {
		br, err := breaker.New(v.cfg)
		if err != nil {
			b.Fatal(err)
		}
		attempt := func() {
			t, err := br.Admit()
			if err != nil {
				b.Fatal(err)
			}
			br.Done(t, outcome.Verdict{})
		}
		b.Run(v.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				attempt()
			}
		})
		b.Run(v.name+"/parallel", func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					attempt()
				}
			})
		})
	}
}

// newRamping returns a breaker on real time that stays Recovering for an hour at
// about p = Initial: it opens for a millisecond on one failure (the setup polls
// its state until the break is over), and its probes succeed.
func newRamping(b *testing.B) *breaker.Breaker {
	b.Helper()
	br, err := breaker.New(breaker.Config{
		ConsecutiveFailures: 1,
		BreakDuration:       time.Millisecond,
		BreakJitter:         breaker.JitterNone,
		Recovery:            &breaker.Recovery{Minimum: time.Hour},
	})
	if err != nil {
		b.Fatal(err)
	}
	t, _ := br.Admit()
	br.Done(t, outcome.Verdict{Kind: outcome.Transient})
	for br.State() == breaker.Open {
	}
	for br.State() == breaker.HalfOpen {
		if t, err := br.Admit(); err == nil {
			br.Done(t, outcome.Verdict{})
		}
	}
	if s := br.State(); s != breaker.Recovering {
		b.Fatalf("state %v, want recovering", s)
	}
	return br
}

// BenchmarkRamp is the two-step API offered to a recovering breaker: about one
// attempt in twenty is admitted and recorded, the rest are refused (and the
// refusal's error is allocated, as an open breaker's is).
func BenchmarkRamp(b *testing.B) {
	br := newRamping(b)
	b.ReportAllocs()
	for b.Loop() {
		if t, err := br.Admit(); err == nil {
			br.Done(t, outcome.Verdict{})
		}
	}
}

func BenchmarkRampParallel(b *testing.B) {
	br := newRamping(b)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if t, err := br.Admit(); err == nil {
				br.Done(t, outcome.Verdict{})
			}
		}
	})
}

// BenchmarkShadow prices shadow mode: a closed breaker in shadow mode on the
// two-step API (the path of a healthy call, as BenchmarkAdmitDone), and an
// isolated one through the stage, where every attempt is a would-be refusal
// that runs all the same (compare BenchmarkRefusal, which does not run it).
func BenchmarkShadow(b *testing.B) {
	b.Run("closed", func(b *testing.B) {
		br, err := breaker.New(breaker.Config{Shadow: true})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			t, err := br.Admit()
			if err != nil {
				b.Fatal(err)
			}
			br.Done(t, outcome.Verdict{})
		}
	})
	b.Run("refusing", func(b *testing.B) {
		br, err := breaker.New(breaker.Config{Shadow: true})
		if err != nil {
			b.Fatal(err)
		}
		br.Isolate()
		p := pipeline.New(breaker.Guard[int](br))
		ctx := context.Background()
		b.ReportAllocs()
		for b.Loop() {
			if _, err := p.Execute(ctx, succeed); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkRefusalLockFree is an open breaker without a hook refusing through
// the stage during its break: the refusal that takes no lock.
func BenchmarkRefusalLockFree(b *testing.B) {
	br, err := breaker.New(breaker.Config{ConsecutiveFailures: 1, BreakDuration: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	t, _ := br.Admit()
	br.Done(t, outcome.Verdict{Kind: outcome.Transient})
	p := pipeline.New(breaker.Guard[int](br))
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Execute(ctx, succeed); err == nil {
			b.Fatal("admitted")
		}
	}
}

// BenchmarkRefusalTrickling is an open breaker with a ramp (and so a trickle)
// refusing through the stage during its break, against a dependency still
// failing: every refusal takes the lock to count the trickle's share, and one
// attempt in 20 goes through as a probe and fails.
func BenchmarkRefusalTrickling(b *testing.B) {
	br, err := breaker.New(breaker.Config{ConsecutiveFailures: 1, BreakDuration: time.Hour, Recovery: &breaker.Recovery{}})
	if err != nil {
		b.Fatal(err)
	}
	t, _ := br.Admit()
	br.Done(t, outcome.Verdict{Kind: outcome.Transient})
	p := pipeline.New(breaker.Guard[int](br))
	ctx := context.Background()
	failing := func(context.Context) (int, error) { return 0, outcome.MarkTransient(errDown) }
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Execute(ctx, failing); err == nil {
			b.Fatal("served")
		}
	}
}

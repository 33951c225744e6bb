package breaker_test

import (
	"context"
	"testing"
	"time"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/breaker"
)

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

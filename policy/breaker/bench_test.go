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

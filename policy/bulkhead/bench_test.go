package bulkhead_test

import (
	"context"
	"testing"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/criticality"
	"github.com/resilience-go/pipeline/policy/bulkhead"
)

// The benchmarks of a bulkhead's own work: a slot taken and given back, on
// one goroutine and on many, through the stage, and a refusal.

func BenchmarkTryAcquireRelease(b *testing.B) {
	bh := mustNew(b, bulkhead.Config{MaxConcurrent: 64})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := bh.TryAcquire(ctx); ok {
			bh.Release(ctx)
		}
	}
}

func BenchmarkTryAcquireReleaseParallel(b *testing.B) {
	bh := mustNew(b, bulkhead.Config{MaxConcurrent: 1 << 20})
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, ok := bh.TryAcquire(ctx); ok {
				bh.Release(ctx)
			}
		}
	})
}

func BenchmarkGuard(b *testing.B) {
	p := pipeline.New(bulkhead.Guard[int](mustNew(b, bulkhead.Config{MaxConcurrent: 64})))
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		_, _ = p.Execute(ctx, ok)
	}
}

func BenchmarkGuardParallel(b *testing.B) {
	p := pipeline.New(bulkhead.Guard[int](mustNew(b, bulkhead.Config{MaxConcurrent: 1 << 20})))
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			_, _ = p.Execute(ctx, ok)
		}
	})
}

func BenchmarkRefusal(b *testing.B) {
	bh := mustNew(b, bulkhead.Config{MaxConcurrent: 1})
	ctx := context.Background()
	if _, ok := bh.TryAcquire(ctx); !ok {
		b.Fatal("the empty bulkhead refused")
	}
	b.ReportAllocs()
	for b.Loop() {
		_, _ = bh.TryAcquire(ctx)
	}
}

// BenchmarkTenants is BenchmarkTryAcquireRelease for calls of a tenant,
// counted by a bulkhead with a TenantShare.
func BenchmarkTenants(b *testing.B) {
	bh := mustNew(b, bulkhead.Config{MaxConcurrent: 64, TenantShare: 0.5})
	ctx := criticality.WithTenant(context.Background(), "acme")
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := bh.TryAcquire(ctx); ok {
			bh.Release(ctx)
		}
	}
}

func BenchmarkTenantsParallel(b *testing.B) {
	bh := mustNew(b, bulkhead.Config{MaxConcurrent: 1 << 20, TenantShare: 0.5})
	ctx := criticality.WithTenant(context.Background(), "acme")
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, ok := bh.TryAcquire(ctx); ok {
				bh.Release(ctx)
			}
		}
	})
}

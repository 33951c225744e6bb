package bench_test

import (
	"testing"

	"github.com/resilience-go/pipeline/bench"
	"github.com/resilience-go/pipeline/standard"
)

// BenchmarkPreset is the standard preset beside the same pipeline built by
// hand: the preset must cost nothing over it.
func BenchmarkPreset(b *testing.B) {
	b.Run("ok/ours", func(b *testing.B) { runOurs(b, bench.OK, bench.OursPreset()) })
	b.Run("ok/handbuilt", func(b *testing.B) { runOurs(b, bench.OK, bench.HandBuiltPreset()) })
}

// BenchmarkScopes is the lookup of a key's pipeline, held already, by
// GOMAXPROCS goroutines over 256 keys: standard.Scopes beside a sync.Map.
func BenchmarkScopes(b *testing.B) {
	keys := make([]string, bench.ScopeKeys)
	for i := range keys {
		keys[i] = bench.KeyOf(i)
	}
	b.Run("get/ours", func(b *testing.B) {
		s := bench.OursScopes()
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			i := 0
			for pb.Next() {
				if _, err := s.Get(keys[i%len(keys)]); err != nil {
					b.Error(err)
					return
				}
				i++
			}
		})
	})
	b.Run("get/syncmap", func(b *testing.B) {
		m := bench.SyncMapScopes()
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			i := 0
			for pb.Next() {
				if v, ok := m.Load(keys[i%len(keys)]); !ok || v.(*standard.Pipeline[int]) == nil {
					b.Error("missing key")
					return
				}
				i++
			}
		})
	})
}

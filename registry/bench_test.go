package registry_test

import (
	"strconv"
	"sync"
	"testing"

	"github.com/resilience-go/pipeline/registry"
)

// benchKeys are the keys of a full registry at the default MaxKeys.
var benchKeys = func() (keys [registry.DefaultMaxKeys]string) {
	for i := range keys {
		keys[i] = "host-" + strconv.Itoa(i) + ".example"
	}
	return keys
}()

// fullRegistry returns a registry holding every one of benchKeys, all served
// from its lock-free copy.
func fullRegistry(b *testing.B) *registry.Registry[string, *int] {
	reg, err := registry.New(registry.Config[string, *int]{New: func(string) (*int, error) { return new(int), nil }})
	if err != nil {
		b.Fatal(err)
	}
	for range 2 { // the second round remakes the lock-free copy with every key
		for _, k := range benchKeys {
			if _, err := reg.Get(k); err != nil {
				b.Fatal(err)
			}
		}
	}
	if reg.Len() != len(benchKeys) {
		b.Fatalf("Len() = %d", reg.Len())
	}
	return reg
}

// fullSyncMap returns a sync.Map holding every one of benchKeys, for
// comparison.
func fullSyncMap() *sync.Map {
	var m sync.Map
	for _, k := range benchKeys {
		m.Store(k, new(int))
	}
	return &m
}

// BenchmarkGet is the Get of a key held by a full registry, from one
// goroutine.
func BenchmarkGet(b *testing.B) {
	reg := fullRegistry(b)
	key := benchKeys[len(benchKeys)/2]
	b.ReportAllocs()
	for b.Loop() {
		if _, err := reg.Get(key); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSyncMapLoad is BenchmarkGet's Load from a sync.Map of the same
// keys.
func BenchmarkSyncMapLoad(b *testing.B) {
	m := fullSyncMap()
	key := benchKeys[len(benchKeys)/2]
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := m.Load(key); !ok {
			b.Fatal("missing")
		}
	}
}

// BenchmarkGetParallel is the Get of one key held by a full registry, from
// every P at once: a hot dependency.
func BenchmarkGetParallel(b *testing.B) {
	reg := fullRegistry(b)
	key := benchKeys[len(benchKeys)/2]
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := reg.Get(key); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkSyncMapLoadParallel is BenchmarkGetParallel's Load from a sync.Map
// of the same keys.
func BenchmarkSyncMapLoadParallel(b *testing.B) {
	m := fullSyncMap()
	key := benchKeys[len(benchKeys)/2]
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, ok := m.Load(key); !ok {
				b.Error("missing")
				return
			}
		}
	})
}

// BenchmarkGetNewKey is the slow path under a stream of keys never seen
// before: every Get builds a value (with a New that costs nothing) and evicts
// the key seen longest ago from a full registry.
func BenchmarkGetNewKey(b *testing.B) {
	reg := fullRegistry(b)
	const n = 1 << 16
	keys := make([]string, n) // built beforehand, so the loop times only Get
	for i := range keys {
		keys[i] = "new-" + strconv.Itoa(i)
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := reg.Get(keys[i%n]); err != nil {
			b.Fatal(err)
		}
	}
}

package registry_test

import (
	"cmp"
	"math"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/resilience-go/pipeline/registry"

	"github.com/resilience-go/pipeline/internal/testcheck"
)

// FuzzConfig checks registry.Config.Validate and the Registry a valid Config
// builds:
//
//   - Validate never panics, and returns nil exactly when New succeeds;
//   - each of its joined errors names, as "Config.<Field>", a field the caller
//     set or, for New, left nil (a zero MaxKeys or IdleAfter means its
//     default, so it is never to blame);
//   - a valid Config builds a Registry that, fed the keys of a byte string
//     with a fake clock stepping between Gets, never holds more than MaxKeys
//     (or DefaultMaxKeys for 0) keys, hands a held key the same value, and
//     calls OnEvict exactly for the values it built and no longer holds.
func FuzzConfig(f *testing.F) {
	for _, m := range []int{0, 1, -1, 2, registry.DefaultMaxKeys, math.MaxInt32, math.MaxInt, math.MinInt} {
		for _, idle := range []int64{0, 1, -1, int64(time.Second), int64(registry.DefaultIdleAfter), math.MaxInt64, math.MinInt64} {
			f.Add(true, m, idle, int64(time.Millisecond), []byte{1, 2, 3, 1, 2, 4, 5, 1})
		}
	}
	f.Add(false, 0, int64(0), int64(0), []byte{})
	f.Add(false, -1, int64(-1), int64(0), []byte{0})
	for _, step := range []int64{0, 1, int64(time.Minute), math.MaxInt64, math.MinInt64} {
		f.Add(true, 3, int64(time.Minute), step, []byte{0, 1, 2, 3, 4, 0, 0, 5, 6, 7, 0, 255, 254, 0})
	}

	f.Fuzz(func(t *testing.T, hasNew bool, maxKeys int, idle, step int64, keys []byte) {
		clock := clockwork.NewFakeClock()
		built := map[*byte]bool{} // every value built and not yet evicted
		cfg := registry.Config[byte, *byte]{MaxKeys: maxKeys, IdleAfter: time.Duration(idle), Clock: clock}
		if hasNew {
			cfg.New = func(k byte) (*byte, error) {
				v := &k
				built[v] = true
				return v, nil
			}
		}
		cfg.OnEvict = func(_ byte, v *byte) {
			if !built[v] {
				t.Fatalf("OnEvict of a value not held: %p", v)
			}
			delete(built, v)
		}
		err := testcheck.Validate(t, cfg, cfg.Validate)
		reg, errNew := registry.New(cfg)
		if (err == nil) != (errNew == nil) {
			t.Fatalf("Validate() = %v but New returned %v for %+v", err, errNew, cfg)
		}
		if err != nil {
			testcheck.Blames(t, err, map[string]bool{"Config.New": !hasNew, "Config.MaxKeys": maxKeys != 0, "Config.IdleAfter": idle != 0})
			return
		}
		limit := cmp.Or(maxKeys, registry.DefaultMaxKeys)
		advance := time.Duration(uint64(step) % uint64(1000*time.Hour)) // no overflow over 64 keys
		for _, k := range keys[:min(len(keys), 64)] {
			clock.Advance(advance)
			v, err := reg.Get(k)
			if err != nil || *v != k {
				t.Fatalf("Get(%d) = %v, %v", k, v, err)
			}
			if again, _ := reg.Get(k); again != v {
				t.Fatalf("Get(%d) twice returned two values", k)
			}
			if n := reg.Len(); n > limit || n != len(built) {
				t.Fatalf("Len() = %d with %d values built and not evicted, MaxKeys %d", n, len(built), limit)
			}
		}
		for _, v := range reg.Range {
			if !built[v] {
				t.Fatalf("Range visits a value evicted or never built: %p", v)
			}
		}
	})
}

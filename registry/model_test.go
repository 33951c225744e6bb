package registry_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"pgregory.net/rapid"

	"github.com/resilience-go/pipeline/registry"
)

// value is what the test's New builds: the key and a serial number that tells
// one lifetime of a key from the next.
type value struct {
	key  int
	life int
}

// modelKey is a key of the model: a plain slice ordered as the registry's
// queue, with the flag and seen time of the documented rule, and the true time
// of the key's last use, which the rule only approximates.
type modelKey struct {
	key     int
	v       *value
	used    bool
	seen    time.Time
	lastUse time.Time
}

// model is the reference for a Registry used from one goroutine: the eviction
// rule of the Registry doc, on a slice, from the key seen longest ago to the
// newest.
type model struct {
	maxKeys int
	idle    time.Duration
	keys    []*modelKey
}

func (m *model) find(key int) *modelKey {
	for _, k := range m.keys {
		if k.key == key {
			return k
		}
	}
	return nil
}

// seenNow moves k to the new end, seen at now, its flag cleared.
func (m *model) seenNow(k *modelKey, now time.Time) {
	m.keys = slices.DeleteFunc(m.keys, func(x *modelKey) bool { return x == k })
	k.used, k.seen = false, now
	m.keys = append(m.keys, k)
}

// insert applies the rule for a new key at now and returns the keys evicted,
// in order. It fails t if the rule breaks a guarantee the doc promises.
func (m *model) insert(t *rapid.T, key int, v *value, now time.Time) (evicted []*modelKey) {
	for len(m.keys) > 0 && now.Sub(m.keys[0].seen) >= m.idle {
		k := m.keys[0]
		if k.used {
			m.seenNow(k, now)
			continue
		}
		if now.Sub(k.lastUse) < m.idle {
			t.Fatalf("key %d evicted as idle %v after its last use (IdleAfter %v)", k.key, now.Sub(k.lastUse), m.idle)
		}
		m.keys, evicted = m.keys[1:], append(evicted, k)
	}
	if len(m.keys) >= m.maxKeys {
		for m.keys[0].used {
			m.seenNow(m.keys[0], now)
		}
		m.keys, evicted = m.keys[1:], append(evicted, m.keys[0])
	}
	m.keys = append(m.keys, &modelKey{key: key, v: v, seen: now, lastUse: now})
	return evicted
}

// eviction is one call of OnEvict.
type eviction struct {
	key int
	v   *value
}

type machine struct {
	reg     *registry.Registry[int, *value]
	m       model
	clock   *clockwork.FakeClock
	keys    int // keys are drawn from [0, keys)
	lives   int // lifetimes built so far
	news    []int
	evicted []eviction
	next    string // how the next New behaves: "ok", "error" or "panic"
}

var errNew = errors.New("the test's New failed")

func newMachine(t *rapid.T) *machine {
	s := &machine{clock: clockwork.NewFakeClockAt(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)), next: "ok"}
	s.m.maxKeys = rapid.IntRange(1, 6).Draw(t, "MaxKeys")
	s.m.idle = rapid.SampledFrom([]time.Duration{time.Second, time.Minute, registry.DefaultIdleAfter}).Draw(t, "IdleAfter")
	s.keys = s.m.maxKeys + rapid.IntRange(1, 6).Draw(t, "extra keys")
	reg, err := registry.New(registry.Config[int, *value]{
		New: func(key int) (*value, error) {
			s.news = append(s.news, key)
			switch s.next {
			case "error":
				return &value{key: key}, errNew
			case "panic":
				panic(fmt.Sprint("New panics for ", key))
			}
			s.lives++
			return &value{key: key, life: s.lives}, nil
		},
		MaxKeys:   s.m.maxKeys,
		IdleAfter: s.m.idle,
		OnEvict:   func(key int, v *value) { s.evicted = append(s.evicted, eviction{key, v}) },
		Clock:     s.clock,
	})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	s.reg = reg
	return s
}

func (s *machine) get(t *rapid.T) {
	key := rapid.IntRange(0, s.keys-1).Draw(t, "key")
	s.next = rapid.SampledFrom([]string{"ok", "ok", "ok", "ok", "error", "panic"}).Draw(t, "New")
	s.news, s.evicted = nil, nil
	now := s.clock.Now()
	held := s.m.find(key)
	lives := s.lives
	v, panicked, err := s.call(key)

	if held != nil {
		if len(s.news) != 0 || err != nil || panicked != nil || v != held.v {
			t.Fatalf("Get(%d) of a held key: New called for %v, got %+v, %v, panic %v; want %+v", key, s.news, v, err, panicked, held.v)
		}
		held.used, held.lastUse = true, now
		s.checkEvicted(t, key, nil)
		return
	}
	if !slices.Equal(s.news, []int{key}) {
		t.Fatalf("Get(%d) of a key not held called New for %v, want it called once", key, s.news)
	}
	switch s.next {
	case "error":
		if !errors.Is(err, errNew) || v != nil {
			t.Fatalf("Get(%d) with a failing New returned %+v, %v", key, v, err)
		}
		s.checkEvicted(t, key, nil)
	case "panic":
		if panicked != fmt.Sprint("New panics for ", key) {
			t.Fatalf("Get(%d) with a panicking New: recovered %v", key, panicked)
		}
		s.checkEvicted(t, key, nil)
	default:
		if err != nil || panicked != nil || v == nil || v.key != key || v.life != lives+1 {
			t.Fatalf("Get(%d) of a new key returned %+v, %v, panic %v", key, v, err, panicked)
		}
		s.checkEvicted(t, key, s.m.insert(t, key, v, now))
	}
}

// call runs Get, recovering a panic.
func (s *machine) call(key int) (v *value, panicked any, err error) {
	defer func() { panicked = recover() }()
	v, err = s.reg.Get(key)
	return v, nil, err
}

// checkEvicted compares the OnEvict calls of the last Get with the model's.
func (s *machine) checkEvicted(t *rapid.T, key int, want []*modelKey) {
	if len(s.evicted) != len(want) {
		t.Fatalf("Get(%d) evicted %v, want %d keys", key, s.evicted, len(want))
	}
	for i, k := range want {
		if s.evicted[i] != (eviction{k.key, k.v}) {
			t.Fatalf("Get(%d) evicted %+v as eviction %d, want key %d life %d", key, s.evicted[i], i, k.key, k.v.life)
		}
	}
}

func (s *machine) rangeAll(t *rapid.T) {
	var got []eviction
	s.reg.Range(func(key int, v *value) bool {
		got = append(got, eviction{key, v})
		return true
	})
	var want []eviction
	for _, k := range slices.Backward(s.m.keys) {
		want = append(want, eviction{k.key, k.v})
	}
	if !slices.Equal(got, want) {
		t.Fatalf("Range visited %v, want %v (newest first)", got, want)
	}
}

func (s *machine) check(t *rapid.T) {
	if n := s.reg.Len(); n != len(s.m.keys) || n > s.m.maxKeys {
		t.Fatalf("Len() = %d, model holds %d, MaxKeys %d", n, len(s.m.keys), s.m.maxKeys)
	}
}

// TestModel runs random Gets (with New succeeding, failing or panicking),
// clock advances and Ranges on a Registry and the model of its doc, and fails
// on the first difference: a held key's value, New called other than exactly
// once per key lifetime, OnEvict calls (keys, values and order), Range's keys
// and order, or Len; the model also checks that no key is evicted as idle
// within IdleAfter of its last use.
func TestModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := newMachine(t)
		t.Repeat(map[string]func(*rapid.T){
			"get": s.get,
			"advance": func(t *rapid.T) {
				idle := s.m.idle
				s.clock.Advance(rapid.OneOf(
					rapid.SampledFrom([]time.Duration{0, 1, idle - 1, idle, 2 * idle}),
					rapid.Map(rapid.Int64Range(1, int64(idle)/2), func(d int64) time.Duration { return time.Duration(d) }),
				).Draw(t, "advance"))
			},
			"range": s.rangeAll,
			"":      s.check,
		})
	})
}

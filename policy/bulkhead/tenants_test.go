package bulkhead_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/criticality"
	"github.com/resilience-go/pipeline/policy/bulkhead"
)

// of is a context of level l (0 for none) and tenant t ("" for none).
func of(l criticality.Level, t string) context.Context {
	return criticality.WithTenant(criticality.With(context.Background(), l), t)
}

func TestATenantHoldsAtMostItsPartOfALevel(t *testing.T) {
	b := mustNew(t, bulkhead.Config{MaxConcurrent: 4, TenantShare: 0.5})
	acme, globex, nobody := of(0, "acme"), of(0, "globex"), context.Background()
	for range 2 {
		_, ok := b.TryAcquire(acme)
		require.True(t, ok)
	}
	_, ok := b.TryAcquire(acme)
	assert.False(t, ok, "half of 4 slots is acme's bound")
	_, ok = b.TryAcquire(nobody)
	assert.True(t, ok, "a call without a tenant is not bounded")
	_, ok = b.TryAcquire(globex)
	assert.True(t, ok, "another tenant has its own bound")
	_, ok = b.TryAcquire(globex)
	assert.False(t, ok, "the bulkhead is full")
	assert.Equal(t, 4, b.InFlight())
}

func TestWithoutATenantShareOneTenantMayFillTheLimit(t *testing.T) {
	for _, share := range []float64{0, 1} {
		b := mustNew(t, bulkhead.Config{MaxConcurrent: 3, TenantShare: share})
		for range 3 {
			_, ok := b.TryAcquire(of(0, "acme"))
			require.True(t, ok, "TenantShare %v", share)
		}
		b.Release(context.Background()) // tenants are not counted: any context will do
		assert.Equal(t, 2, b.InFlight())
	}
}

func TestReleaseChargesTheTenantOfItsContext(t *testing.T) {
	b := mustNew(t, bulkhead.Config{MaxConcurrent: 4, TenantShare: 0.5})
	acme, globex := of(0, "acme"), of(0, "globex")
	for _, ctx := range []context.Context{acme, acme, globex} {
		_, ok := b.TryAcquire(ctx)
		require.True(t, ok)
	}
	b.Release(globex)
	_, ok := b.TryAcquire(acme)
	assert.False(t, ok, "globex gave its slot back, not acme")
	b.Release(acme)
	_, ok = b.TryAcquire(acme)
	assert.True(t, ok, "acme gave one back")

	assert.PanicsWithValue(t, "bulkhead: Release for a tenant that holds no slot (release with the context the slot was taken with)",
		func() { b.Release(of(0, "initech")) })
	assert.Equal(t, 2, b.InFlight(), "the stray Release freed nothing")
	_, ok = b.TryAcquire(acme)
	assert.False(t, ok, "nor changed acme's count")
}

// A tenant's slots are counted across its levels, and its bound is its part
// of the slots the call's level may fill, rounded down.
func TestATenantsBoundIsItsPartOfItsLevelsCap(t *testing.T) {
	b := mustNew(t, bulkhead.Config{MaxConcurrent: 4, TenantShare: 0.5})
	_, ok := b.TryAcquire(of(criticality.Sheddable, "acme"))
	require.True(t, ok)
	_, ok = b.TryAcquire(of(criticality.Sheddable, "acme"))
	assert.False(t, ok, "Sheddable may fill 3 of 4 slots; half of 3 is 1")
	_, ok = b.TryAcquire(of(criticality.Default, "acme"))
	assert.True(t, ok, "Default may fill 4; half of 4 is 2, the Sheddable slot included")
	_, ok = b.TryAcquire(of(criticality.Critical, "acme"))
	assert.False(t, ok)
}

// A call refused for its tenant's bound does not make the lower levels give
// way, as a call refused for want of slots does.
func TestATenantsRefusalSqueezesNoLevel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := mustNew(t, bulkhead.Config{MaxConcurrent: 4, TenantShare: 0.5})
		for range 2 {
			_, ok := b.TryAcquire(of(criticality.Critical, "acme"))
			require.True(t, ok)
		}
		_, ok := b.TryAcquire(of(criticality.Critical, "acme"))
		require.False(t, ok, "acme holds its bound")
		_, ok = b.TryAcquire(of(criticality.Sheddable, ""))
		assert.True(t, ok, "Sheddable keeps its 3 of 4 slots: a squeeze would have left it 2")

		_, ok = b.TryAcquire(of(criticality.Critical, ""))
		require.True(t, ok)
		_, ok = b.TryAcquire(of(criticality.Critical, ""))
		require.False(t, ok, "full: this refusal squeezes the levels below")
		b.Release(context.Background())
		b.Release(context.Background())
		_, ok = b.TryAcquire(of(criticality.Sheddable, ""))
		assert.False(t, ok, "Sheddable's 3 of 4 were halved")
	})
}

// While the levels give way, a tenant's bound is its part of the slots its
// level may fill then, and it grows back with them.
func TestWhileALevelGivesWayItsTenantsBoundShrinksWithIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := mustNew(t, bulkhead.Config{MaxConcurrent: 8, TenantShare: 0.5})
		acme, critical := of(criticality.Default, "acme"), of(criticality.Critical, "")
		_, ok := b.TryAcquire(acme)
		require.True(t, ok)
		for range 7 {
			_, ok = b.TryAcquire(critical)
			require.True(t, ok)
		}
		_, ok = b.TryAcquire(critical)
		require.False(t, ok, "full: Default gives way half of its 8 slots")
		for range 6 {
			b.Release(critical)
		}
		_, ok = b.TryAcquire(acme)
		require.True(t, ok, "3 of Default's 4 slots taken, acme holds 1 of its 2")
		_, ok = b.TryAcquire(acme)
		assert.False(t, ok, "acme holds half of the 4 slots Default may fill now, though Default may take one more")
		_, ok = b.TryAcquire(of(criticality.Default, "globex"))
		assert.True(t, ok, "Default may take one more")

		time.Sleep(time.Second) // the squeeze has passed: Default may fill 8, acme 4
		_, ok = b.TryAcquire(acme)
		assert.True(t, ok)
	})
}

// A call held back by its tenant's bound waits in the queue without holding
// up the calls behind it, and takes the first slot its tenant may hold.
func TestAHeldBackCallDoesNotHoldUpTheQueue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := mustNew(t, bulkhead.Config{MaxConcurrent: 2, MaxQueue: 2, MaxWait: time.Minute, TenantShare: 0.5})
		acme, globex, nobody := of(0, "acme"), of(0, "globex"), context.Background()
		_, ok := b.TryAcquire(acme)
		require.True(t, ok)
		_, ok = b.TryAcquire(nobody)
		require.True(t, ok)
		served := make(chan string, 2)
		for _, w := range []struct {
			name string
			ctx  context.Context
		}{{"acme", acme}, {"globex", globex}} {
			go func() {
				if b.Acquire(w.ctx) == nil {
					served <- w.name
				}
			}()
			synctest.Wait() // queued in this order
		}
		require.Equal(t, 2, b.Queued())
		b.Release(nobody)
		synctest.Wait()
		assert.Equal(t, "globex", <-served, "acme's call, first in the queue, is held back by acme's bound")
		assert.Equal(t, 1, b.Queued())
		b.Release(acme)
		synctest.Wait()
		assert.Equal(t, "acme", <-served)
		assert.Equal(t, 0, b.Queued())
		assert.Equal(t, 2, b.InFlight())
	})
}

// A held-back call's wait still runs out, even with slots free, and its
// refusal makes no level give way.
func TestAHeldBackCallsWaitRunsOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := mustNew(t, bulkhead.Config{MaxConcurrent: 4, MaxQueue: 1, MaxWait: time.Second, TenantShare: 0.25})
		acme := of(criticality.Critical, "acme")
		_, ok := b.TryAcquire(acme)
		require.True(t, ok)
		start := time.Now()
		err := b.Acquire(acme)
		stop, isStop := errors.AsType[*pipeline.StopError](err)
		require.True(t, isStop, "got %v", err)
		assert.Equal(t, pipeline.ConcurrencyLimited, stop.Reason)
		assert.Equal(t, time.Second, time.Since(start))
		assert.Equal(t, 1, b.InFlight(), "three slots stayed free")
		assert.Equal(t, 0, b.Queued())
		for range 2 {
			_, ok = b.TryAcquire(of(criticality.Sheddable, ""))
			assert.True(t, ok, "Sheddable keeps its 3 of 4 slots: a squeeze would have left it 2")
		}
	})
}

// A call held back by its tenant's bound that gives its place in a full
// queue to a higher level makes no level give way either.
func TestADisplacedHeldBackCallSqueezesNoLevel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := mustNew(t, bulkhead.Config{MaxConcurrent: 4, MaxQueue: 1, MaxWait: time.Minute, TenantShare: 0.5})
		acme, critical := of(criticality.Default, "acme"), of(criticality.Critical, "")
		for range 2 {
			_, ok := b.TryAcquire(acme)
			require.True(t, ok)
		}
		displaced := make(chan error, 1)
		go func() { displaced <- b.Acquire(acme) }() // held back by acme's bound
		synctest.Wait()
		require.Equal(t, 1, b.Queued())
		for range 2 {
			_, ok := b.TryAcquire(critical)
			require.True(t, ok)
		}
		got := make(chan error, 1)
		go func() { got <- b.Acquire(critical) }() // full: it takes acme's place
		synctest.Wait()
		_, isStop := errors.AsType[*pipeline.StopError](<-displaced)
		require.True(t, isStop, "acme's call gave its place")
		b.Release(acme) // to the Critical call
		require.NoError(t, <-got)
		b.Release(acme)
		b.Release(critical)
		require.Equal(t, 2, b.InFlight())
		_, ok := b.TryAcquire(of(criticality.Sheddable, ""))
		assert.True(t, ok, "Sheddable keeps its 3 of 4 slots: a squeeze would have left it 2")
	})
}

// TestTwoTenantsShareALevel runs random sequences of calls of one level, for
// two tenants and for none, through a bulkhead without a queue, with random
// shares, a random limit and a random TenantShare (half of the time 0.5),
// taking and giving back slots with TryAcquire and Release. With cap the
// slots the level may fill and bound = max(1, ⌊TenantShare × cap⌋) (in
// whole arithmetic on TenantShare in hundredths), after every step:
//
//  1. Neither tenant holds more than bound slots, and all calls together no
//     more than cap.
//  2. A call of a tenant is admitted exactly when its tenant holds fewer
//     than bound slots and fewer than cap are taken; a call without a
//     tenant exactly when fewer than cap are taken.
//  3. A call of the tenant holding fewer slots (either, when they hold as
//     many) is admitted whenever a call of the other would be, at the same
//     instant: the other's is tried first and, if admitted, given back, which
//     restores the bulkhead exactly (no queue, and the level's own refusals
//     squeeze only the levels below it).
//  4. With TenantShare at most 0.5 and a cap of at least 2, while calls
//     without a tenant hold no slot, a tenant holding fewer than bound
//     slots is admitted whatever the other holds: with 0.5, each tenant can
//     always take ⌊cap/2⌋ slots, however noisy the other.
//
// Each claim is checked by probes that are given back at once.
func TestTwoTenantsShareALevel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		level := criticality.Level(rapid.IntRange(1, 3).Draw(t, "level"))
		var shares criticality.Shares
		if rapid.Bool().Draw(t, "shares") {
			d := rapid.Float64Range(0.1, 1).Draw(t, "default")
			shares = criticality.Shares{Default: d, Sheddable: rapid.Float64Range(0.1, d).Draw(t, "sheddable")}
		}
		limit := rapid.IntRange(1, 16).Draw(t, "limit")
		percent := rapid.SampledFrom([]int{50, -1}).Draw(t, "tenant share")
		if percent < 0 {
			percent = rapid.IntRange(1, 99).Draw(t, "percent")
		}
		b, err := bulkhead.New(bulkhead.Config{MaxConcurrent: limit, Shares: shares, TenantShare: float64(percent) / 100})
		if err != nil {
			t.Fatal(err)
		}
		capacity := shares.Cap(level, limit)
		bound := max(1, percent*capacity/100)

		names := []string{"a", "b", ""}
		ctxs := map[string]context.Context{}
		for _, n := range names {
			ctxs[n] = of(level, n)
		}
		held := map[string]int{} // slots held, by tenant ("" for none)
		total := func() int { return held["a"] + held["b"] + held[""] }
		// probe reports whether a call of n would be admitted now, and gives
		// its slot back if it was.
		probe := func(n string) bool {
			_, ok := b.TryAcquire(ctxs[n])
			if ok {
				b.Release(ctxs[n])
			}
			return ok
		}
		take := func(n string) {
			if _, ok := b.TryAcquire(ctxs[n]); ok {
				held[n]++
			}
		}
		t.Repeat(map[string]func(*rapid.T){
			"take a":    func(*rapid.T) { take("a") },
			"take b":    func(*rapid.T) { take("b") },
			"take none": func(*rapid.T) { take("") },
			"give back": func(t *rapid.T) {
				n := rapid.SampledFrom(names).Draw(t, "whose")
				if held[n] == 0 {
					t.Skip("holds none")
				}
				b.Release(ctxs[n])
				held[n]--
			},
			"": func(t *rapid.T) {
				for _, n := range []string{"a", "b"} {
					if held[n] > bound {
						t.Fatalf("claim 1: tenant %s holds %d slots, bound %d (cap %d)", n, held[n], bound, capacity)
					}
				}
				if total() > capacity || total() != b.InFlight() {
					t.Fatalf("claim 1: %d slots held, InFlight %d, cap %d", total(), b.InFlight(), capacity)
				}
				for _, n := range names {
					want := total() < capacity && (n == "" || held[n] < bound)
					if got := probe(n); got != want {
						t.Fatalf("claim 2: a call of %q admitted %v, want %v (holds %d of bound %d, %d of cap %d taken)", n, got, want, held[n], bound, total(), capacity)
					}
				}
				poorer, richer := "a", "b"
				if held["a"] > held["b"] {
					poorer, richer = "b", "a"
				}
				if probe(richer) && !probe(poorer) {
					t.Fatalf("claim 3: %s (holding %d) refused while %s (holding %d) is admitted", poorer, held[poorer], richer, held[richer])
				}
				if percent <= 50 && capacity >= 2 && held[""] == 0 {
					for _, n := range []string{"a", "b"} {
						if held[n] < bound && !probe(n) {
							t.Fatalf("claim 4: %s holds %d of its %d and is refused (the other holds %d, cap %d)", n, held[n], bound, total()-held[n], capacity)
						}
					}
				}
			},
		})
	})
}

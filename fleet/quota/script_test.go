package quota

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The script's arithmetic, on times passed directly: a bucket of 10 tokens
// earning one every millisecond.
func TestTakeScript(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: redisAddr(t), ContextTimeoutEnabled: true})
	defer rdb.Close()
	ctx := context.Background()
	keys := keysOf(namespace(t), "partner")
	const t0 = int64(1_764_586_800_000_000) // µs
	const interval, burst = 1000.0, 10
	steps := []struct {
		at            int64 // µs after t0
		want, granted int64
		wait          time.Duration
	}{
		{0, 4, 4, 0},                              // a full bucket: 6 left
		{0, 10, 6, time.Millisecond},              // the rest; the next token in 1 ms
		{0, 1, 0, time.Millisecond},               // empty
		{2500, 5, 2, 500 * time.Microsecond},      // 2.5 ms earn 2 tokens and half a third
		{3000, 1, 1, time.Millisecond},            // the third
		{3000, 0, 0, time.Millisecond},            // asking for none takes none
		{1_000_000_000, 20, 10, time.Millisecond}, // after a long quiet spell: the burst, no more
		{1_000_000_000, 1, 0, time.Millisecond},   // and nothing else
		{1_000_004_999, 9, 4, time.Microsecond},   // 4.999 ms earn 4
	}
	for i, s := range steps {
		granted, wait, _, err := grant(ctx, rdb, keys, takeRequest{interval: interval, burst: burst,
			want: s.want, process: "a", ttl: time.Hour, now: t0 + s.at})
		require.NoError(t, err, "step %d", i)
		assert.Equal(t, s.granted, granted, "step %d: granted", i)
		assert.Equal(t, s.wait, wait, "step %d: wait", i)
	}
	// The key expires when its tat passes: 10 intervals after the last
	// grant's now at most, plus a millisecond. (The script was fed times
	// from the past, so only the bound is checked.)
	ttl, err := rdb.PTTL(ctx, keys.tat).Result()
	require.NoError(t, err)
	assert.LessOrEqual(t, ttl, 11*time.Millisecond)

	// With now 0, the script reads Redis's clock: a fresh key grants the
	// burst.
	fresh := keysOf(namespace(t), "partner")
	granted, _, seen, err := grant(ctx, rdb, fresh, takeRequest{interval: interval, burst: burst, want: 50,
		process: "a", ttl: time.Second})
	require.NoError(t, err)
	assert.Equal(t, int64(burst), granted)
	assert.Equal(t, int64(1), seen)
}

// Each fetch registers its process; the count holds those that fetched
// within the TTL, and giving back takes the process off.
func TestTakeScriptCountsTheProcessesSeen(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: redisAddr(t), ContextTimeoutEnabled: true})
	defer rdb.Close()
	ctx := context.Background()
	keys := keysOf(namespace(t), "partner")
	const t0 = int64(1_764_586_800_000_000) // µs
	const ttl = 3 * time.Second
	steps := []struct {
		at      int64 // µs after t0
		process string
		seen    int64
	}{
		{0, "a", 1},
		{1000, "b", 2},
		{1000, "b", 2},        // once each
		{3_000_500, "a", 2},   // b fetched 2.9995 s ago: still seen
		{3_001_000, "c", 3},   // b exactly 3 s ago: still seen
		{3_001_001, "c", 2},   // b gone
		{6_000_500, "c", 2},   // a fetched 3 s ago: still seen
		{100_000_000, "d", 1}, // all gone but d
	}
	for i, s := range steps {
		_, _, seen, err := grant(ctx, rdb, keys, takeRequest{interval: 1000, burst: 10, process: s.process,
			ttl: ttl, now: t0 + s.at})
		require.NoError(t, err, "step %d", i)
		assert.Equal(t, s.seen, seen, "step %d: seen", i)
	}
	pttl, err := rdb.PTTL(ctx, keys.seen).Result()
	require.NoError(t, err)
	assert.InDelta(t, float64(ttl.Milliseconds()), float64(pttl.Milliseconds()), 100, "the set expires with its newest member")
	_, err = giveBack(ctx, rdb, keys, 1000, 0, "d", t0+100_000_000)
	require.NoError(t, err)
	n, err := rdb.ZCard(ctx, keys.seen).Result()
	require.NoError(t, err)
	assert.Zero(t, n, "d is off")
}

// A charge moves tat on before anything is granted, whatever the bucket
// holds: it may leave fewer than none available, which the fleet earns back
// at the rate. A bucket of 10 tokens earning one every millisecond.
func TestTakeScriptChargesFirst(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: redisAddr(t), ContextTimeoutEnabled: true})
	defer rdb.Close()
	ctx := context.Background()
	keys := keysOf(namespace(t), "partner")
	const t0 = int64(1_764_586_800_000_000) // µs
	const interval, burst = 1000.0, 10
	steps := []struct {
		at                  int64 // µs after t0
		debt, want, granted int64
		wait                time.Duration
	}{
		{0, 4, 3, 3, 0},                              // a full bucket (no key yet): 4 charged, 3 granted, 3 left
		{0, 12, 1, 0, 10 * time.Millisecond},         // 12 more: 9 below none; the next token in 10 ms
		{9_000, 0, 1, 0, time.Millisecond},           // 9 ms earn the 9 back: none yet
		{10_000, 0, 5, 1, time.Millisecond},          // the tenth millisecond, the first token
		{1_000_000, 30, 5, 0, 21 * time.Millisecond}, // after a quiet spell the bucket is full, and a charge above it takes everything
	}
	for i, s := range steps {
		granted, wait, _, err := grant(ctx, rdb, keys, takeRequest{interval: interval, burst: burst,
			want: s.want, debt: s.debt, process: "a", ttl: time.Hour, now: t0 + s.at})
		require.NoError(t, err, "step %d", i)
		assert.Equal(t, s.granted, granted, "step %d: granted", i)
		assert.Equal(t, s.wait, wait, "step %d: wait", i)
	}
}

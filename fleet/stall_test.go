package fleet

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline/fleet/internal/redistest"
	"github.com/resilience-go/pipeline/policy/breaker"
)

// Watch and Close on a fleet whose Redis stalls each return within half a
// Refresh, bounded as documented. (With a go-redis client's own timeouts,
// 5.0 s each at a Refresh of 200 ms.)
func TestAFleetOnAStalledRedisReturnsWithinItsRefresh(t *testing.T) {
	rdb, p := redistest.StalledClient(t)
	f, err := New(Config{Redis: rdb, Namespace: namespace(t), Refresh: 200 * time.Millisecond})
	require.NoError(t, err)
	b, err := breaker.New(breaker.Config{Name: dep})
	require.NoError(t, err)
	p.Stall()
	var stop func()
	took := redistest.Timed(func() {
		stop, err = f.Watch(b)
		require.NoError(t, err)
	})
	assert.Less(t, took, redistest.StallBound, "Watch took %v", took)
	assert.True(t, f.Degraded())
	assert.Less(t, redistest.Timed(stop), redistest.StallBound)
	took = redistest.Timed(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		assert.ErrorIs(t, f.Isolate(ctx, dep), context.DeadlineExceeded, "Isolate on a stalled Redis, bounded by its context")
	})
	assert.Less(t, took, redistest.StallBound, "Isolate took %v", took)
	assert.Less(t, redistest.Timed(f.Close), redistest.StallBound)
}

// A go-redis client that ignores context deadlines is refused by name,
// whichever kind it is: with it no timeout of ours bounds a call. (The
// quota's test of the same is in package fleet/quota.)
func TestAClientThatIgnoresDeadlinesIsRefused(t *testing.T) {
	clients := map[string]redis.UniversalClient{
		"Client":        redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}),
		"ClusterClient": redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{"127.0.0.1:1"}}),
		"Ring":          redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"a": "127.0.0.1:1"}}),
	}
	for name, rdb := range clients {
		t.Run(name, func(t *testing.T) {
			defer rdb.Close()
			_, err := New(Config{Redis: rdb})
			assert.ErrorContains(t, err, "fleet: Config.Redis ignores context deadlines")
			assert.ErrorContains(t, err, "ContextTimeoutEnabled: true")
		})
	}
	// A client that honours deadlines is accepted.
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", ContextTimeoutEnabled: true})
	defer rdb.Close()
	assert.NoError(t, Config{Redis: rdb}.Validate())
}

package quota

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/fleet"
	"github.com/resilience-go/pipeline/fleet/internal/redistest"
)

// A Redis that stops answering turns the quota degraded within a fetch's
// Timeout of the first fetch that meets it, and Close returns within its
// Timeout. (With a go-redis client's own timeouts, 5.0 s and 9.9 s.)
func TestAStalledRedisDegradesTheQuotaWithinItsTimeout(t *testing.T) {
	rdb, p := redistest.StalledClient(t)
	degraded := make(chan struct{})
	var once sync.Once
	q, err := New(Config{Redis: rdb, Namespace: namespace(t), Name: "partner", Rate: 1000, Lease: 10,
		Processes: 1, OnEvent: func(_ context.Context, _ pipeline.Source, e pipeline.Event) {
			if _, ok := e.(fleet.Degraded); ok {
				once.Do(func() { close(degraded) })
			}
		}})
	require.NoError(t, err)
	require.False(t, q.Degraded())
	p.Stall()
	for { // spend the lease: the call that finds it empty asks for a fetch
		if _, ok := q.Allow(); !ok {
			break
		}
	}
	select {
	case <-degraded:
	case <-time.After(redistest.StallBound):
		t.Fatalf("not degraded %v after the stall", redistest.StallBound)
	}
	assert.Less(t, redistest.Timed(q.Close), redistest.StallBound)
}

// New on a Redis that never answers returns within its Timeout, degraded,
// and Close returns within its Timeout. (With a go-redis client's own
// timeouts, New took 5.0 s.)
func TestNewQuotaOnAStalledRedisReturnsWithinItsTimeout(t *testing.T) {
	rdb, p := redistest.StalledClient(t)
	p.Stall()
	var q *Quota
	took := redistest.Timed(func() {
		var err error
		q, err = New(Config{Redis: rdb, Namespace: namespace(t), Name: "partner", Rate: 1000, Processes: 1})
		require.NoError(t, err)
	})
	assert.Less(t, took, redistest.StallBound, "New took %v", took)
	assert.True(t, q.Degraded())
	assert.Less(t, redistest.Timed(q.Close), redistest.StallBound)
}

// A go-redis client that ignores context deadlines is refused by name,
// whichever kind it is: with it no timeout of ours bounds a call. (The
// fleet's test of the same is in package fleet.)
func TestAClientThatIgnoresDeadlinesIsRefused(t *testing.T) {
	clients := map[string]redis.UniversalClient{
		"Client":        redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}),
		"ClusterClient": redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{"127.0.0.1:1"}}),
		"Ring":          redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"a": "127.0.0.1:1"}}),
	}
	for name, rdb := range clients {
		t.Run(name, func(t *testing.T) {
			defer rdb.Close()
			_, err := New(Config{Redis: rdb, Name: "partner", Rate: 1, Processes: 1})
			assert.ErrorContains(t, err, "quota: Config.Redis ignores context deadlines")
			assert.ErrorContains(t, err, "ContextTimeoutEnabled: true")
		})
	}
	// A client that honours deadlines is accepted.
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", ContextTimeoutEnabled: true})
	defer rdb.Close()
	assert.NoError(t, Config{Redis: rdb, Name: "partner", Rate: 1, Processes: 1}.Validate())
}

package fleet

import (
	"math"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestConfigDefaults(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", ContextTimeoutEnabled: true})
	defer rdb.Close()
	s, err := Config{Redis: rdb}.settings()
	require.NoError(t, err)
	assert.Equal(t, DefaultNamespace, s.namespace)
	assert.NotEmpty(t, s.process)
	assert.Equal(t, defaultRefresh, s.refresh)
	assert.Equal(t, 3*time.Second, s.ttl)
	assert.Equal(t, defaultFraction, s.fraction)
	assert.Equal(t, 2*time.Second, s.hold())
}

func TestConfigRefusesImpossibleValues(t *testing.T) {
	err := Config{Namespace: "a{b", Refresh: -1, TTL: -1, Quorum: -1, Fraction: math.NaN()}.Validate()
	require.Error(t, err)
	for _, want := range []string{"Config.Redis", "Config.Namespace", "Config.Refresh", "Config.TTL", "Config.Quorum", "Config.Fraction"} {
		assert.ErrorContains(t, err, want)
	}
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", ContextTimeoutEnabled: true})
	defer rdb.Close()
	assert.ErrorContains(t, Config{Redis: rdb, Refresh: time.Second, TTL: time.Millisecond}.Validate(), "TTL must be at least Refresh")
	assert.ErrorContains(t, Config{Redis: rdb, Fraction: 1}.Validate(), "Fraction")
	assert.ErrorContains(t, Config{Redis: rdb, Refresh: MaxDuration + 1}.Validate(), "at most")
	_, err = New(Config{})
	assert.Error(t, err)
}

// The quorum is a strict majority of the processes seen, never below two.
func TestNeed(t *testing.T) {
	s := settings{fraction: defaultFraction}
	for seen, want := range map[int]int{0: 2, 1: 2, 2: 2, 3: 2, 4: 3, 5: 3, 10: 6, 200: 101} {
		assert.Equal(t, want, s.need(seen), "seen %d", seen)
	}
	s.quorum = 1
	assert.Equal(t, minQuorum, s.need(10))
	s.quorum = 7
	assert.Equal(t, 7, s.need(3))
}

func TestKeysShareAHashTag(t *testing.T) {
	k := keysOf("shop", "payments")
	assert.Equal(t, "pipeline:fleet:{4:shop:payments}:seen", k.seen)
	assert.Equal(t, "pipeline:fleet:{4:shop:payments}:open", k.open)
	assert.Equal(t, "pipeline:fleet:{4:shop:payments}:following", k.following)
	assert.Equal(t, "pipeline:fleet:{4:shop:payments}:control", k.control)
}

// TestKeysAreUnambiguous: every pair of accepted names has keys of its own.
// Joined with ':' alone, breaker "b:c" of fleet "svc" and breaker "c" of
// fleet "svc:b" shared their keys, and so did quotas (issue #27 item 10;
// the quotas' test is in package fleet/quota).
func TestKeysAreUnambiguous(t *testing.T) {
	pairs := [][2]string{{"svc", "b:c"}, {"svc:b", "c"}, {"svc:b:c", ""}, {"", "svc:b:c"}, {"shop", "pay:eu"}, {"shop:pay", "eu"}, {"1:x", "y"}, {"1", "x:y"}}
	fleets := map[keys][2]string{}
	for _, p := range pairs {
		k := keysOf(p[0], p[1])
		if other, ok := fleets[k]; ok {
			t.Errorf("breaker %q of fleet %q and breaker %q of fleet %q share %v", p[1], p[0], other[1], other[0], k)
		}
		fleets[k] = p
	}
}

// TestPruneAfterKeepsTheFleetsPruningsConstant checks the prune interval's
// bounds: within ±50% of 3 × TTL for a fleet of up to pruners processes, so
// far inside forget, and growing with the fleet beyond, so that the fleet as
// a whole prunes about pruners times every 3 × TTL.
func TestPruneAfterKeepsTheFleetsPruningsConstant(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{ContextTimeoutEnabled: true})
	defer rdb.Close()
	s, err := Config{Redis: rdb}.settings()
	require.NoError(t, err)
	base := 3 * s.ttl
	for _, seen := range []int{0, 1, pruners, 50, 400, 5000} {
		scale := max(1, float64(seen)/pruners)
		var sum time.Duration
		const draws = 2000
		for range draws {
			d := s.pruneAfter(seen)
			require.GreaterOrEqual(t, float64(d), 0.5*scale*float64(base), "seen %d", seen)
			require.Less(t, float64(d), 1.5*scale*float64(base), "seen %d", seen)
			sum += d
		}
		rate := float64(seen) * draws * float64(base) / float64(sum) // prunings of the fleet every 3 × TTL
		if seen > pruners {
			assert.InDelta(t, pruners, rate, 0.5, "seen %d", seen)
		}
	}
	assert.Less(t, 1.5*float64(base), float64(s.forget()), "a fleet of up to pruners processes prunes within forget")
}

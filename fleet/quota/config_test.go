package quota

import (
	"math"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline/fleet"
)

func TestQuotaConfigDefaults(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", ContextTimeoutEnabled: true})
	defer rdb.Close()
	s, err := Config{Redis: rdb, Name: "partner", Rate: 1000.0 / 60, Processes: 4}.settings()
	require.NoError(t, err)
	assert.Equal(t, fleet.DefaultNamespace, s.namespace)
	assert.Equal(t, int64(2), s.burst, "a tenth of a second of 16.7/s, rounded up")
	assert.Equal(t, int64(1), s.lease)
	assert.Equal(t, defaultTimeout, s.timeout)
	assert.NotNil(t, s.clock)

	s, err = Config{Redis: rdb, Name: "partner", Rate: 2000, Processes: 4}.settings()
	require.NoError(t, err)
	assert.Equal(t, int64(200), s.burst)
	assert.Equal(t, int64(20), s.lease, "Rate/100")
	assert.Equal(t, int64(10), s.low())
	assert.InDelta(t, 500.0, s.interval(), 1e-9)

	s, err = Config{Redis: rdb, Name: "partner", Rate: 1e5, Burst: 50, Processes: 1}.settings()
	require.NoError(t, err)
	assert.Equal(t, int64(50), s.lease, "never above Burst")
}

func TestQuotaConfigRefusesImpossibleValues(t *testing.T) {
	err := Config{Namespace: "a}", Name: "b{", Rate: math.NaN(), Burst: -1, Lease: -1, Timeout: -1}.Validate()
	require.Error(t, err)
	for _, want := range []string{"quota: Config.Redis", "quota: Config.Namespace", "quota: Config.Name", "quota: Config.Rate",
		"quota: Config.Burst", "quota: Config.Lease", "quota: Config.Processes", "quota: Config.Timeout"} {
		assert.ErrorContains(t, err, want)
	}
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", ContextTimeoutEnabled: true})
	defer rdb.Close()
	ok := Config{Redis: rdb, Name: "partner", Rate: 10, Processes: 2}
	require.NoError(t, ok.Validate())
	for _, c := range []struct {
		edit func(*Config)
		want string
	}{
		{func(c *Config) { c.Name = "" }, `Config.Name is required`},
		{func(c *Config) { c.Rate = 0 }, "Config.Rate must be positive and at most 1e+06 calls a second, got 0"},
		{func(c *Config) { c.Rate = math.Inf(1) }, "Config.Rate"},
		{func(c *Config) { c.Rate = 2e6 }, "got 2e+06"},
		{func(c *Config) { c.Burst, c.Lease = 5, 6 }, "Config.Lease must be at most Burst (a fetch can never get more), got Lease 6 with Burst 5"},
		{func(c *Config) { c.Processes = 0 }, "Config.Processes must be at least 1"},
		{func(c *Config) { c.Processes = -3 }, "got -3"},
		{func(c *Config) { c.Timeout = -time.Second }, "Config.Timeout must not be negative"},
		{func(c *Config) { c.Timeout = fleet.MaxDuration }, "Config.Timeout must be at most"},
	} {
		cfg := ok
		c.edit(&cfg)
		assert.ErrorContains(t, cfg.Validate(), c.want)
		_, err := New(cfg)
		assert.Error(t, err)
	}
}

func TestQuotaKeyIsOneHashTag(t *testing.T) {
	assert.Equal(t, keys{tat: "pipeline:quota:{4:shop:partner}", seen: "pipeline:quota:{4:shop:partner}:seen"},
		keysOf("shop", "partner"))
}

// TestKeysAreUnambiguous: every pair of accepted names has keys of its own.
// Joined with ':' alone, quota "b:c" of namespace "svc" and quota "c" of
// namespace "svc:b" shared their keys, and so did breakers (issue #27 item
// 10; the breakers' test is in package fleet).
func TestKeysAreUnambiguous(t *testing.T) {
	pairs := [][2]string{{"svc", "b:c"}, {"svc:b", "c"}, {"svc:b:c", ""}, {"", "svc:b:c"}, {"shop", "pay:eu"}, {"shop:pay", "eu"}, {"1:x", "y"}, {"1", "x:y"}}
	quotas := map[keys][2]string{}
	for _, p := range pairs {
		q := keysOf(p[0], p[1])
		if other, ok := quotas[q]; ok {
			t.Errorf("quota %q of %q and quota %q of %q share %v", p[1], p[0], other[1], other[0], q)
		}
		quotas[q] = p
	}
}

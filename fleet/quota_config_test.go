package fleet

import (
	"math"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestQuotaConfigDefaults(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", ContextTimeoutEnabled: true})
	defer rdb.Close()
	s, err := QuotaConfig{Redis: rdb, Name: "partner", Rate: 1000.0 / 60, Processes: 4}.settings()
	require.NoError(t, err)
	assert.Equal(t, DefaultNamespace, s.namespace)
	assert.Equal(t, int64(2), s.burst, "a tenth of a second of 16.7/s, rounded up")
	assert.Equal(t, int64(1), s.lease)
	assert.Equal(t, DefaultQuotaTimeout, s.timeout)
	assert.NotNil(t, s.clock)

	s, err = QuotaConfig{Redis: rdb, Name: "partner", Rate: 2000, Processes: 4}.settings()
	require.NoError(t, err)
	assert.Equal(t, int64(200), s.burst)
	assert.Equal(t, int64(20), s.lease, "Rate/100")
	assert.Equal(t, int64(10), s.low())
	assert.InDelta(t, 500.0, s.interval(), 1e-9)

	s, err = QuotaConfig{Redis: rdb, Name: "partner", Rate: 1e5, Burst: 50, Processes: 1}.settings()
	require.NoError(t, err)
	assert.Equal(t, int64(50), s.lease, "never above Burst")
}

func TestQuotaConfigRefusesImpossibleValues(t *testing.T) {
	err := QuotaConfig{Namespace: "a}", Name: "b{", Rate: math.NaN(), Burst: -1, Lease: -1, Timeout: -1}.Validate()
	require.Error(t, err)
	for _, want := range []string{"QuotaConfig.Redis", "QuotaConfig.Namespace", "QuotaConfig.Name", "QuotaConfig.Rate",
		"QuotaConfig.Burst", "QuotaConfig.Lease", "QuotaConfig.Processes", "QuotaConfig.Timeout"} {
		assert.ErrorContains(t, err, want)
	}
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", ContextTimeoutEnabled: true})
	defer rdb.Close()
	ok := QuotaConfig{Redis: rdb, Name: "partner", Rate: 10, Processes: 2}
	require.NoError(t, ok.Validate())
	for _, c := range []struct {
		edit func(*QuotaConfig)
		want string
	}{
		{func(c *QuotaConfig) { c.Name = "" }, `QuotaConfig.Name is required`},
		{func(c *QuotaConfig) { c.Rate = 0 }, "QuotaConfig.Rate must be positive and at most 1e+06 calls a second, got 0"},
		{func(c *QuotaConfig) { c.Rate = math.Inf(1) }, "QuotaConfig.Rate"},
		{func(c *QuotaConfig) { c.Rate = 2e6 }, "got 2e+06"},
		{func(c *QuotaConfig) { c.Burst, c.Lease = 5, 6 }, "QuotaConfig.Lease must be at most Burst (a fetch can never get more), got Lease 6 with Burst 5"},
		{func(c *QuotaConfig) { c.Processes = 0 }, "QuotaConfig.Processes must be at least 1"},
		{func(c *QuotaConfig) { c.Processes = -3 }, "got -3"},
		{func(c *QuotaConfig) { c.Timeout = -time.Second }, "QuotaConfig.Timeout must not be negative"},
		{func(c *QuotaConfig) { c.Timeout = MaxDuration }, "QuotaConfig.Timeout must be at most"},
	} {
		cfg := ok
		c.edit(&cfg)
		assert.ErrorContains(t, cfg.Validate(), c.want)
		_, err := NewQuota(cfg)
		assert.Error(t, err)
	}
}

func TestQuotaKeyIsOneHashTag(t *testing.T) {
	assert.Equal(t, quotaKeys{tat: "pipeline:quota:{4:shop:partner}", seen: "pipeline:quota:{4:shop:partner}:seen"},
		quotaKeysOf("shop", "partner"))
}
